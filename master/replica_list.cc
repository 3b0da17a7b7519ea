#include "master/replica_list.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace mr::master {
namespace {

// Every worker id seen, by number; a deque never moves what it holds, so a
// name's reference stays good while others are added.
struct NodeTable {
  std::mutex mu;
  std::deque<std::string> names;
  std::unordered_map<std::string, NodeNum> numbers;
};

NodeTable& Table() {
  static NodeTable* table = new NodeTable();  // never destroyed: names outlive every list
  return *table;
}

}  // namespace

NodeNum NodeNumber(const std::string& name) {
  NodeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.numbers.find(name);
  if (it != t.numbers.end()) return it->second;
  if (t.names.size() >= kMaxNodes) {
    throw std::length_error("the master has numbered " + std::to_string(kMaxNodes) +
                            " worker ids, its limit: cannot number '" + name + "'");
  }
  const auto n = static_cast<NodeNum>(t.names.size());
  t.names.push_back(name);
  t.numbers.emplace(name, n);
  return n;
}

std::optional<NodeNum> FindNodeNumber(const std::string& name) {
  NodeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.numbers.find(name);
  if (it == t.numbers.end()) return std::nullopt;
  return it->second;
}

const std::string& NodeName(NodeNum number) {
  NodeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names[number];
}

size_t NodeCount() {
  NodeTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names.size();
}

NodeNum* ReplicaList::heap() const {
  NodeNum* p;
  std::memcpy(&p, slots_, sizeof p);
  return p;
}

void ReplicaList::set_heap(NodeNum* p) { std::memcpy(slots_, &p, sizeof p); }

void ReplicaList::Free() {
  if (capacity_ > kInline) delete[] heap();
  capacity_ = kInline;
  size_ = 0;
}

ReplicaList::ReplicaList(ReplicaList&& o) noexcept
    : size_(o.size_), capacity_(o.capacity_) {
  std::memcpy(slots_, o.slots_, sizeof slots_);
  o.size_ = 0;
  o.capacity_ = kInline;
}

ReplicaList& ReplicaList::operator=(ReplicaList&& o) noexcept {
  if (this == &o) return *this;
  Free();
  std::memcpy(slots_, o.slots_, sizeof slots_);
  size_ = o.size_;
  capacity_ = o.capacity_;
  o.size_ = 0;
  o.capacity_ = kInline;
  return *this;
}

ReplicaList& ReplicaList::operator=(const ReplicaList& o) {
  if (this == &o) return *this;
  Free();
  for (size_t i = 0; i < o.size_; ++i) PushNumber(o.data()[i]);
  return *this;
}

bool ReplicaList::ContainsNumber(NodeNum n) const {
  return std::find(data(), data() + size_, n) != data() + size_;
}

bool ReplicaList::Contains(const std::string& node) const {
  const auto n = FindNodeNumber(node);
  return n && ContainsNumber(*n);
}

void ReplicaList::PushNumber(NodeNum n) {
  if (size_ == capacity_) {
    if (capacity_ == UINT8_MAX) throw std::length_error("a block listed 255 replicas");
    const uint8_t grown = static_cast<uint8_t>(std::min<int>(2 * capacity_, UINT8_MAX));
    auto* bigger = new NodeNum[grown];
    std::copy(data(), data() + size_, bigger);
    if (capacity_ > kInline) delete[] heap();
    set_heap(bigger);
    capacity_ = grown;
  }
  data()[size_++] = n;
}

bool ReplicaList::RemoveNumber(NodeNum n) {
  NodeNum* d = data();
  NodeNum* end = std::remove(d, d + size_, n);
  const bool removed = end != d + size_;
  size_ = static_cast<uint8_t>(end - d);
  return removed;
}

bool ReplicaList::Remove(const std::string& node) {
  const auto n = FindNodeNumber(node);
  return n && RemoveNumber(*n);
}

}  // namespace mr::master
