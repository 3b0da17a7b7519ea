// ReplicaList: the workers holding a block, as the master keeps it for each
// of millions of blocks (issue 29: 10,000,000 blocks in ≤ 1.5 GiB).
//
// A worker id is stored as a small number (NodeNumber): each distinct id is
// numbered when the master first knows the worker and keeps its number for
// the life of the process. Numbers are 16 bits: a master numbers at most
// kMaxNodes ids (a cluster has thousands of workers; Admit refuses a new
// one past the limit). Up to four numbers are held inline, in 10 bytes with
// 2-byte alignment, so a block's replicas cost no allocation; a list that
// grows past four (surplus copies, replication above 4) moves to the heap.
//
// It reads like the std::vector<std::string> it replaced: iteration yields
// each worker's id (const std::string&), in the order added.
//
// NodeNumber/NodeName are thread-safe; a ReplicaList is not.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace mr::master {

using NodeNum = uint16_t;
constexpr size_t kMaxNodes = 65535;  // distinct worker ids a master numbers

// The number of worker id `name` (the same for the life of the process),
// numbering it if new. REQUIRES: NodeCount() < kMaxNodes or `name` numbered.
NodeNum NodeNumber(const std::string& name);
// The number of `name` if it has one; never numbers it.
std::optional<NodeNum> FindNodeNumber(const std::string& name);
// The worker id numbered `number`. REQUIRES: NodeNumber returned it.
const std::string& NodeName(NodeNum number);
// How many ids are numbered.
size_t NodeCount();

class ReplicaList {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;

    const_iterator() = default;
    explicit const_iterator(const NodeNum* at) : at_(at) {}
    reference operator*() const { return NodeName(*at_); }
    pointer operator->() const { return &NodeName(*at_); }
    const_iterator& operator++() {
      ++at_;
      return *this;
    }
    const_iterator operator++(int) { return const_iterator(at_++); }
    bool operator==(const const_iterator& o) const { return at_ == o.at_; }

   private:
    const NodeNum* at_ = nullptr;
  };

  ReplicaList() = default;
  ReplicaList(const ReplicaList& o) { *this = o; }
  ReplicaList(ReplicaList&& o) noexcept;
  ReplicaList& operator=(const ReplicaList& o);
  ReplicaList& operator=(ReplicaList&& o) noexcept;
  ~ReplicaList() { Free(); }

  const_iterator begin() const { return const_iterator(data()); }
  const_iterator end() const { return const_iterator(data() + size_); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const std::string& front() const { return NodeName(data()[0]); }
  // The numbers, in the order added.
  const NodeNum* numbers() const { return data(); }

  bool Contains(const std::string& node) const;
  bool ContainsNumber(NodeNum n) const;
  // Appends `node`. REQUIRES: !Contains(node).
  void push_back(const std::string& node) { PushNumber(NodeNumber(node)); }
  void PushNumber(NodeNum n);
  // Removes `node` if listed; the others keep their order. Returns whether it was.
  bool Remove(const std::string& node);
  bool RemoveNumber(NodeNum n);
  void clear() { Free(); }

  std::vector<std::string> Names() const { return {begin(), end()}; }
  operator std::vector<std::string>() const { return Names(); }  // NOLINT: reads as the old vector

 private:
  static constexpr uint8_t kInline = 4;
  // Inline: the numbers themselves. On the heap (capacity_ > kInline): the
  // pointer's bytes, copied in and out (keeps the alignment at 2).
  NodeNum* heap() const;
  void set_heap(NodeNum* p);
  const NodeNum* data() const { return capacity_ > kInline ? heap() : slots_; }
  NodeNum* data() { return capacity_ > kInline ? heap() : slots_; }
  void Free();

  NodeNum slots_[kInline] = {};
  uint8_t size_ = 0;
  uint8_t capacity_ = kInline;
};

static_assert(sizeof(ReplicaList) == 10 && alignof(ReplicaList) == 2,
              "a ReplicaList is 10 bytes: it is in every block's state");

}  // namespace mr::master
