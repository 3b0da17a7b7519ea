// ReplicaList (master/replica_list.h): four worker numbers inline, more on
// the heap, reading like the vector of ids it replaced.
#include "master/replica_list.h"

#include <gtest/gtest.h>

namespace mr::master {
namespace {

std::vector<std::string> Ids(int n, const std::string& prefix) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

TEST(ReplicaListTest, GrowsPastFourAndKeepsOrder) {
  ReplicaList l;
  const auto ids = Ids(11, "grow-");
  for (const auto& id : ids) l.push_back(id);
  EXPECT_EQ(l.Names(), ids);  // inline, then moved to the heap twice
  EXPECT_TRUE(l.Remove("grow-0"));
  EXPECT_FALSE(l.Remove("grow-0"));
  EXPECT_EQ(l.front(), "grow-1");
  EXPECT_EQ(l.size(), 10u);
}

TEST(ReplicaListTest, CopiesAndMovesOwnTheirNumbers) {
  ReplicaList a;
  for (const auto& id : Ids(6, "copy-")) a.push_back(id);
  ReplicaList b = a;             // a deep copy: changing one leaves the other
  b.Remove("copy-3");
  EXPECT_TRUE(a.Contains("copy-3"));
  EXPECT_FALSE(b.Contains("copy-3"));
  ReplicaList c = std::move(a);  // takes the heap list; a is empty
  EXPECT_EQ(c.size(), 6u);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
  c = b;
  EXPECT_EQ(c.Names(), b.Names());
  ReplicaList small;
  small.push_back("copy-0");
  c = std::move(small);          // frees c's heap list
  EXPECT_EQ(c.Names(), std::vector<std::string>{"copy-0"});
}

TEST(ReplicaListTest, LookingUpNeverNumbersAnId) {
  const size_t before = NodeCount();
  ReplicaList l;
  EXPECT_FALSE(l.Contains("never-listed"));
  EXPECT_FALSE(l.Remove("never-listed"));
  EXPECT_FALSE(FindNodeNumber("never-listed").has_value());
  EXPECT_EQ(NodeCount(), before);  // a worker id from a bad request takes no number
}

}  // namespace
}  // namespace mr::master
