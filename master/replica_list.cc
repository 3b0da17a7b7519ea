#include "master/replica_list.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace mr::master {
namespace {

// Every worker id seen, by number; a deque never moves what it holds, so a
// name's reference stays good while others are added.
struct NodeTable {
  std::mutex mu;
  std::deque<std::string> names;
  std::unordered_map<std::string, uint32_t> numbers;
};

NodeTable& Table() {
  static NodeTable* table = new NodeTable();  // never destroyed: names outlive every list
  return *table;
}

}  // namespace

uint32_t NodeNumber(const std::string& name) {
  NodeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto [it, added] = t.numbers.emplace(name, static_cast<uint32_t>(t.names.size()));
  if (added) t.names.push_back(name);
  return it->second;
}

const std::string& NodeName(uint32_t number) {
  NodeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names[number];
}

bool ReplicaList::Contains(const std::string& node) const {
  const uint32_t n = NodeNumber(node);
  return std::find(numbers_.begin(), numbers_.end(), n) != numbers_.end();
}

void ReplicaList::Remove(const std::string& node) {
  const uint32_t n = NodeNumber(node);
  numbers_.erase(std::remove(numbers_.begin(), numbers_.end(), n), numbers_.end());
}

}  // namespace mr::master
