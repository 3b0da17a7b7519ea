// ReplicaList: the workers holding a block, as the master keeps it for each
// of millions of blocks (issue 29: 10,000,000 blocks in ≤ 1.5 GiB).
//
// A worker id is stored as a small number (NodeNumber): each distinct id is
// numbered the first time it is seen and keeps its number for the life of
// the process (a cluster has thousands of workers, not millions). A list of
// up to three numbers is held inline, so a block's replicas cost 24 bytes
// and no allocation, against ~100 bytes for three std::strings in a vector.
//
// It reads like the std::vector<std::string> it replaced: iteration yields
// each worker's id (const std::string&), in the order added.
//
// NodeNumber/NodeName are thread-safe; a ReplicaList is not.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include <absl/container/inlined_vector.h>

namespace mr::master {

// The number of worker id `name` (the same for the life of the process).
uint32_t NodeNumber(const std::string& name);
// The worker id numbered `number`. REQUIRES: NodeNumber returned it.
const std::string& NodeName(uint32_t number);

class ReplicaList {
  using Numbers = absl::InlinedVector<uint32_t, 3>;

 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;

    const_iterator() = default;
    explicit const_iterator(Numbers::const_iterator at) : at_(at) {}
    reference operator*() const { return NodeName(*at_); }
    pointer operator->() const { return &NodeName(*at_); }
    const_iterator& operator++() {
      ++at_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(at_++); }
    bool operator==(const const_iterator& o) const { return at_ == o.at_; }

   private:
    Numbers::const_iterator at_{};
  };

  const_iterator begin() const { return const_iterator(numbers_.begin()); }
  const_iterator end() const { return const_iterator(numbers_.end()); }
  size_t size() const { return numbers_.size(); }
  bool empty() const { return numbers_.empty(); }
  const std::string& front() const { return NodeName(numbers_.front()); }

  bool Contains(const std::string& node) const;
  // Appends `node`. REQUIRES: !Contains(node).
  void push_back(const std::string& node) { numbers_.push_back(NodeNumber(node)); }
  // Removes `node` if listed; the others keep their order.
  void Remove(const std::string& node);
  void clear() { numbers_.clear(); }

  std::vector<std::string> Names() const { return {begin(), end()}; }
  operator std::vector<std::string>() const { return Names(); }  // NOLINT: reads as the old vector

 private:
  Numbers numbers_;
};

}  // namespace mr::master
