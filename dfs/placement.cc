// Replica placement policies. The contract is in placement.h; this file adds
// the choices the header leaves open:
//
//  - Eligible nodes are those not in `exclude` whose free_bytes is -1
//    (unlimited) or >= block_bytes. Any other negative free_bytes counts as
//    "no room".
//  - Ties break by node id, never by input order: the eligible nodes are sorted
//    by id (duplicate ids keep their first occurrence) before any random draw,
//    so the same seed gives the same placement however the master lists nodes.
//  - Random draws use UniformIndex/Bernoulli below on the raw 64-bit output of
//    std::mt19937_64 (whose sequence the standard fixes), not the standard
//    distributions (whose algorithms differ across standard libraries).
//    A pick among exactly one candidate draws nothing.
//  - Errors: InvalidArgument if replication < 1 (checked first), Unavailable
//    when no node is eligible.
//  - Not thread-safe: `spread` keeps a rotating start. The master calls
//    Choose() from one thread (placement.h).
#include "dfs/placement.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string_view>
#include <utility>

namespace mr::dfs {
namespace {

constexpr const char* kPolicyNames[] = {"random", "hdfs", "spread", "skewed"};

// Uniform in [0, n), REQUIRES: n > 0. Rejects the low 2^64 mod n outputs so the
// remaining range is a whole multiple of n (OpenBSD arc4random_uniform).
size_t UniformIndex(std::mt19937_64& rng, size_t n) {
  if (n == 1) return 0;
  const uint64_t bound = n;
  const uint64_t threshold = (uint64_t{0} - bound) % bound;  // == 2^64 mod n
  uint64_t x;
  do {
    x = rng();
  } while (x < threshold);
  return static_cast<size_t>(x % bound);
}

// True with probability p, from the top 53 bits of one draw; p >= 1 is always true.
bool Bernoulli(std::mt19937_64& rng, double p) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
  return u < p;
}

// One request in progress: the eligible nodes, which are taken, and the
// pipeline chosen so far.
class Selection {
 public:
  // InvalidArgument if replication < 1; Unavailable if nothing is eligible.
  static Result<Selection> Begin(const PlacementRequest& request,
                                 const std::vector<PlacementNode>& nodes) {
    if (request.replication < 1) {
      return Status::InvalidArgument("replication must be >= 1, got " +
                                     std::to_string(request.replication));
    }
    std::vector<std::string> exclude = request.exclude;
    std::sort(exclude.begin(), exclude.end());
    Selection s;
    size_t excluded = 0, full = 0;
    for (const PlacementNode& node : nodes) {
      if (std::binary_search(exclude.begin(), exclude.end(), node.id)) {
        ++excluded;
      } else if (node.free_bytes != -1 && node.free_bytes < request.block_bytes) {
        ++full;
      } else {
        s.eligible_.push_back(&node);
      }
    }
    // Sorted by id, so the choice does not depend on the order of `nodes`;
    // the master passes them sorted already, sparing an O(n log n) sort of
    // string ids per block placed among thousands of nodes.
    auto by_id = [](const PlacementNode* a, const PlacementNode* b) { return a->id < b->id; };
    if (!std::is_sorted(s.eligible_.begin(), s.eligible_.end(), by_id)) {
      std::stable_sort(s.eligible_.begin(), s.eligible_.end(), by_id);
    }
    s.eligible_.erase(
        std::unique(s.eligible_.begin(), s.eligible_.end(),
                    [](const PlacementNode* a, const PlacementNode* b) { return a->id == b->id; }),
        s.eligible_.end());
    if (s.eligible_.empty()) {
      return Status::Unavailable("no eligible node: " + std::to_string(nodes.size()) + " live, " +
                                 std::to_string(excluded) + " excluded, " + std::to_string(full) +
                                 " without " + std::to_string(request.block_bytes) + " free bytes");
    }
    s.taken_.assign(s.eligible_.size(), false);
    s.want_ = std::min(s.eligible_.size(), static_cast<size_t>(request.replication));
    return s;
  }

  bool done() const { return chosen_.size() >= want_; }

  // Picks uniformly among the untaken eligible nodes for which pred is true,
  // appends it to the pipeline and returns it; nullptr (and no draw) if none.
  template <typename Pred>
  const PlacementNode* Pick(std::mt19937_64& rng, Pred&& pred) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < eligible_.size(); ++i) {
      if (!taken_[i] && pred(*eligible_[i])) candidates.push_back(i);
    }
    if (candidates.empty()) return nullptr;
    const size_t i = candidates[UniformIndex(rng, candidates.size())];
    taken_[i] = true;
    chosen_.push_back(eligible_[i]->id);
    return eligible_[i];
  }

  const PlacementNode* PickAny(std::mt19937_64& rng) {
    return Pick(rng, [](const PlacementNode&) { return true; });
  }

  // Replica 1 when the request pins it to a datacenter: the writer if it is
  // an eligible node there, else a random eligible node there; nullptr (and
  // no draw) when nothing is pinned or nothing there is eligible.
  const PlacementNode* PickPinned(std::mt19937_64& rng, const PlacementRequest& request) {
    if (!request.datacenter.has_value()) return nullptr;
    const std::string& dc = *request.datacenter;
    const PlacementNode* n = nullptr;
    if (request.writer.has_value()) {
      n = Pick(rng, [&](const PlacementNode& x) {
        return x.id == *request.writer && x.datacenter == dc;
      });
    }
    if (n == nullptr) n = Pick(rng, [&](const PlacementNode& x) { return x.datacenter == dc; });
    return n;
  }

  std::vector<std::string> TakeChosen() && { return std::move(chosen_); }

 private:
  std::vector<const PlacementNode*> eligible_;  // sorted by id, distinct ids
  std::vector<bool> taken_;                     // parallel to eligible_
  std::vector<std::string> chosen_;             // pipeline order
  size_t want_ = 0;                             // min(replication, eligible)
};

class RandomPolicy : public PlacementPolicy {
 public:
  const char* name() const override { return "random"; }
  Result<std::vector<std::string>> Choose(const PlacementRequest& request,
                                          const std::vector<PlacementNode>& nodes,
                                          std::mt19937_64& rng) override {
    MR_ASSIGN_OR_RETURN(Selection s, Selection::Begin(request, nodes));
    s.PickPinned(rng, request);
    while (!s.done()) s.PickAny(rng);
    return std::move(s).TakeChosen();
  }
};

// HDFS BlockPlacementPolicyDefault with the datacenter in the role of the rack.
// A rack is identified by (datacenter, rack), so "r1" in two datacenters is two
// racks; with racks unconfigured every node's rack is "" and "same rack" means
// "same datacenter". Each step tries its tiers in order and the first tier with
// a candidate wins:
//   1. the pinned datacenter (PickPinned), if any; the writer, if eligible;
//      a node of the writer's datacenter, when only that is known; any node.
//   2. another datacenter than 1; another rack than 1; any node.
//      (With one datacenter the first tier is empty, so racks decide.)
//   3. the rack of 2; the datacenter of 2 (our addition: keeps the replica off
//      the wide-area link when 2's rack is full); any node.
//   4+. any node.
class HdfsPolicy : public PlacementPolicy {
 public:
  const char* name() const override { return "hdfs"; }
  Result<std::vector<std::string>> Choose(const PlacementRequest& request,
                                          const std::vector<PlacementNode>& nodes,
                                          std::mt19937_64& rng) override {
    MR_ASSIGN_OR_RETURN(Selection s, Selection::Begin(request, nodes));
    const PlacementNode* first = s.PickPinned(rng, request);
    if (first == nullptr && request.writer.has_value()) {
      first = s.Pick(rng, [&](const PlacementNode& n) { return n.id == *request.writer; });
    }
    if (first == nullptr && request.writer_datacenter.has_value()) {
      first = s.Pick(
          rng, [&](const PlacementNode& n) { return n.datacenter == *request.writer_datacenter; });
    }
    if (first == nullptr) first = s.PickAny(rng);
    if (s.done()) return std::move(s).TakeChosen();

    // Pointers into `nodes`, which outlive this call.
    const PlacementNode* second =
        s.Pick(rng, [&](const PlacementNode& n) { return n.datacenter != first->datacenter; });
    if (second == nullptr) {
      second = s.Pick(rng, [&](const PlacementNode& n) { return !SameRack(n, *first); });
    }
    if (second == nullptr) second = s.PickAny(rng);
    if (s.done()) return std::move(s).TakeChosen();

    if (s.Pick(rng, [&](const PlacementNode& n) { return SameRack(n, *second); }) == nullptr) {
      s.Pick(rng, [&](const PlacementNode& n) { return n.datacenter == second->datacenter; });
    }
    // The third replica's last tier and replicas 4+: any node.
    while (!s.done()) s.PickAny(rng);
    return std::move(s).TakeChosen();
  }

 private:
  static bool SameRack(const PlacementNode& x, const PlacementNode& y) {
    return x.datacenter == y.datacenter && x.rack == y.rack;
  }
};

// Round-robin over the datacenters of the full node list, sorted by name (K of
// them; using all live nodes, not just the eligible ones, keeps the rotation
// stable while nodes fill up). Each call starts one datacenter later than the
// previous call. A cursor walks the ring: each replica goes to a random
// untaken eligible node in the first datacenter at or after the cursor that
// has one, and the cursor moves just past that datacenter. With no datacenter
// exhausted this is "replica i in datacenter (start + i) mod K"; an exhausted
// datacenter is skipped without piling two replicas onto its successor.
// The start advances only on calls that return nodes. A pinned datacenter
// (request.datacenter) replaces the start of that call, when it is in the ring.
class SpreadPolicy : public PlacementPolicy {
 public:
  const char* name() const override { return "spread"; }
  Result<std::vector<std::string>> Choose(const PlacementRequest& request,
                                          const std::vector<PlacementNode>& nodes,
                                          std::mt19937_64& rng) override {
    MR_ASSIGN_OR_RETURN(Selection s, Selection::Begin(request, nodes));
    std::vector<std::string> dcs;
    for (const PlacementNode& n : nodes) dcs.push_back(n.datacenter);
    std::sort(dcs.begin(), dcs.end());
    dcs.erase(std::unique(dcs.begin(), dcs.end()), dcs.end());
    const size_t k = dcs.size();  // >= 1: Begin found an eligible node

    size_t cursor = static_cast<size_t>(calls_ % k);
    ++calls_;
    if (request.datacenter.has_value()) {
      auto pinned = std::lower_bound(dcs.begin(), dcs.end(), *request.datacenter);
      if (pinned != dcs.end() && *pinned == *request.datacenter) cursor = pinned - dcs.begin();
    }
    while (!s.done()) {
      bool placed = false;
      for (size_t step = 0; step < k && !placed; ++step) {
        const std::string& dc = dcs[(cursor + step) % k];
        if (s.Pick(rng, [&](const PlacementNode& n) { return n.datacenter == dc; })) {
          cursor = (cursor + step + 1) % k;
          placed = true;
        }
      }
      if (!placed) break;  // unreachable: every eligible node's datacenter is in dcs
    }
    return std::move(s).TakeChosen();
  }

 private:
  uint64_t calls_ = 0;
};

// Hot spots on purpose (Pandas §III, §VII-A2). The hot set is the first
// ceil(hot_node_fraction * N) distinct ids of the full node list (at least one
// node), so it depends only on membership, not on fullness, exclusion or input
// order. Each replica draws Bernoulli(hot_block_fraction) once, even if the
// chosen set then turns out to be exhausted, and falls back to the other set.
// With a pinned datacenter, replica 1 tries its set there, then the other
// set there, before the two sets anywhere.
class SkewedPolicy : public PlacementPolicy {
 public:
  explicit SkewedPolicy(const PlacementParams& params) : params_(params) {}
  const char* name() const override { return "skewed"; }
  Result<std::vector<std::string>> Choose(const PlacementRequest& request,
                                          const std::vector<PlacementNode>& nodes,
                                          std::mt19937_64& rng) override {
    MR_ASSIGN_OR_RETURN(Selection s, Selection::Begin(request, nodes));
    std::vector<std::string_view> ids;
    for (const PlacementNode& n : nodes) ids.push_back(n.id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    // The epsilon absorbs products like 0.2 * 20 landing a hair above 4.
    const double exact = params_.hot_node_fraction * static_cast<double>(ids.size());
    const size_t hot_count =
        std::clamp<size_t>(static_cast<size_t>(std::ceil(exact - 1e-9)), 1, ids.size());
    const std::string_view last_hot = ids[hot_count - 1];

    bool first = true;
    while (!s.done()) {
      const bool want_hot = Bernoulli(rng, params_.hot_block_fraction);
      auto wanted = [&](const PlacementNode& n) { return (n.id <= last_hot) == want_hot; };
      auto other = [&](const PlacementNode& n) { return (n.id <= last_hot) != want_hot; };
      if (first && request.datacenter.has_value()) {
        first = false;
        const std::string& dc = *request.datacenter;
        if (s.Pick(rng, [&](const PlacementNode& n) { return wanted(n) && n.datacenter == dc; }) ||
            s.Pick(rng, [&](const PlacementNode& n) { return other(n) && n.datacenter == dc; })) {
          continue;
        }
      }
      if (s.Pick(rng, wanted) == nullptr) s.Pick(rng, other);
    }
    return std::move(s).TakeChosen();
  }

 private:
  PlacementParams params_;
};

Status CheckFraction(const char* field, double value) {
  if (value > 0.0 && value <= 1.0) return Status::OK();  // false for NaN too
  std::ostringstream msg;
  msg << "skewed placement: " << field << " must be in (0, 1], got " << value;
  return Status::InvalidArgument(msg.str());
}

template <typename T, typename... Args>
std::unique_ptr<PlacementPolicy> New(Args&&... args) {
  return std::make_unique<T>(std::forward<Args>(args)...);
}

}  // namespace

// Fractions are checked only for `skewed`, the one policy that reads them, so
// a stray value in the cluster file cannot stop a master that ignores it.
Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(const std::string& name,
                                                             const PlacementParams& params) {
  if (name == "random") return New<RandomPolicy>();
  if (name == "hdfs") return New<HdfsPolicy>();
  if (name == "spread") return New<SpreadPolicy>();
  if (name == "skewed") {
    MR_RETURN_IF_ERROR(CheckFraction("hot_node_fraction", params.hot_node_fraction));
    MR_RETURN_IF_ERROR(CheckFraction("hot_block_fraction", params.hot_block_fraction));
    return New<SkewedPolicy>(params);
  }
  std::string valid;
  for (const std::string& n : PlacementPolicyNames()) valid += (valid.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown placement policy '" + name + "' (valid: " + valid + ")");
}

std::vector<std::string> PlacementPolicyNames() {
  return {std::begin(kPolicyNames), std::end(kPolicyNames)};
}

}  // namespace mr::dfs
