// The members' list in heartbeat replies (issue 29): a worker hears of each
// change of the list once, as a delta since the version it has, not the
// whole list at every change (O(workers²) entries while a fleet joins), and
// its view (common/member_view.h, as mr-worker keeps it) stays the master's
// list: a death and a return reach every worker, a worker that missed
// changes gets them all, and one whose version says nothing (none, another
// run's, ahead of the master's, or an older worker that does not apply
// deltas) gets the whole list. A real Master over real RPC
// (tests/master/master_fixture.h).
#include <map>
#include <set>
#include <vector>

#include "common/member_view.h"
#include "tests/master/master_fixture.h"

namespace mr::master {
namespace {

class MemberDeltasTest : public MasterFixture {
 protected:
  // Registers `id` and starts its view from the reply.
  void Join(const std::string& id, int map_slots = 1) {
    pb::RegisterReply reply;
    ASSERT_TRUE(Register(id, &reply, map_slots).ok()) << id;
    EXPECT_GT(reply.membership_version(), 0u);
    views_[id].Apply(reply.members(), reply.dead_members(), reply.membership_version(), false);
  }

  // A heartbeat of `id` with `version`, asking for deltas or not.
  pb::HeartbeatReply Beat(const std::string& id, uint64_t version, bool deltas = true) {
    pb::HeartbeatRequest beat;
    beat.set_worker_id(id);
    beat.set_membership_version(version);
    beat.set_member_deltas(deltas);
    pb::HeartbeatReply reply;
    EXPECT_TRUE(Call("cluster.Heartbeat", beat, &reply).ok()) << id;
    EXPECT_FALSE(reply.reregister()) << id;
    return reply;
  }

  // A beat of `id` as mr-worker sends it; its view applies the reply.
  MemberView::Change BeatAndApply(const std::string& id) {
    MemberView& view = views_[id];
    pb::HeartbeatReply reply = Beat(id, view.version());
    entries_[id] += reply.members_size();
    if (reply.membership_version() == 0) return {};  // the view is current
    return view.Apply(reply.members(), reply.dead_members(), reply.membership_version(),
                      reply.members_delta());
  }

  // Every worker's view is the master's list: the same members, with the
  // same info, dead exactly when the master has it not live.
  void ExpectViewsAreTheMasters() {
    const pb::ClusterStatusReply status = ClusterStatus();
    for (const auto& [id, view] : views_) {
      if (!Live(id)) continue;
      ASSERT_EQ(view.members().size(), static_cast<size_t>(status.workers_size())) << id;
      for (const pb::WorkerStatus& w : status.workers()) {
        auto it = view.members().find(w.worker().id());
        ASSERT_NE(it, view.members().end()) << id << " does not know " << w.worker().id();
        EXPECT_EQ(it->second.info.SerializeAsString(), w.worker().SerializeAsString())
            << id << "'s view of " << w.worker().id();
        EXPECT_EQ(it->second.dead, !w.live()) << id << "'s view of " << w.worker().id();
      }
    }
  }

  std::map<std::string, MemberView> views_;
  std::map<std::string, int64_t> entries_;  // members' entries each worker's beats got
};

std::string Id(int i) { return "w" + std::to_string(i); }

// Fails on the master before deltas: each beat got the whole list, so the
// k-th worker got k, k+1, ..., n entries (O(n²)) instead of n - k.
TEST_F(MemberDeltasTest, AJoiningFleetSendsEachWorkerEachNewcomerOnce) {
  const int n = 24;
  for (int i = 1; i <= n; ++i) {
    Join(Id(i));
    for (int j = 1; j < i; ++j) {  // every worker beats between two registrations
      const int64_t before = entries_[Id(j)];
      BeatAndApply(Id(j));
      EXPECT_EQ(entries_[Id(j)] - before, 1) << Id(j) << " hears of " << Id(i) << " alone";
    }
  }
  for (int j = 1; j <= n; ++j) {
    EXPECT_EQ(entries_[Id(j)], n - j) << Id(j) << " hears of each later worker once";
  }
  ExpectViewsAreTheMasters();
}

// A worker declared dead reaches every other worker's view in one entry,
// and so does its return.
TEST_F(MemberDeltasTest, ADeathAndAReturnReachEveryWorker) {
  for (int i = 1; i <= 5; ++i) Join(Id(i));
  for (int i = 1; i <= 5; ++i) BeatAndApply(Id(i));
  // w3 goes silent: 210 ms of the master's clock since its beat, 60 since the others'.
  clock_.Advance(150);
  for (int i : {1, 2, 4, 5}) BeatAndApply(Id(i));
  clock_.Advance(60);
  bool dead = false;
  for (int t = 0; t < 100 && !dead; ++t) {  // bounded: ≤ 5 s of real time
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    dead = !Live("w3");
  }
  ASSERT_TRUE(dead) << "w3 missed 200 ms of heartbeats on the master's clock";
  for (int i : {1, 2, 4, 5}) {
    const int64_t before = entries_[Id(i)];
    const MemberView::Change change = BeatAndApply(Id(i));
    EXPECT_EQ(change.died, std::vector<std::string>{"w3"}) << Id(i);
    EXPECT_EQ(entries_[Id(i)] - before, 1) << Id(i) << " hears of w3 alone";
    EXPECT_EQ(views_[Id(i)].DeadIds(), std::vector<std::string>{"w3"}) << Id(i);
  }
  ExpectViewsAreTheMasters();

  Join("w3");  // it comes back
  EXPECT_TRUE(views_["w3"].DeadIds().empty());
  for (int i : {1, 2, 4, 5}) {
    const MemberView::Change change = BeatAndApply(Id(i));
    EXPECT_EQ(change.revived, std::vector<std::string>{"w3"}) << Id(i);
    EXPECT_TRUE(views_[Id(i)].DeadIds().empty()) << Id(i);
  }
  ExpectViewsAreTheMasters();
}

// A worker that did not beat while the list changed several times gets
// every change in its next beat, each member once however often it changed.
TEST_F(MemberDeltasTest, AWorkerThatMissedChangesGetsThemAllOnce) {
  Join("w1");
  for (int i = 2; i <= 6; ++i) Join(Id(i));
  Join("w4", /*map_slots=*/3);  // registers again with other slots: its entry changes again
  const MemberView::Change change = BeatAndApply("w1");
  EXPECT_EQ(entries_["w1"], 5) << "w2 ... w6, w4 once";
  EXPECT_TRUE(change.died.empty());
  EXPECT_EQ(views_["w1"].members().at("w4").info.map_slots(), 3);
  for (int i = 2; i <= 6; ++i) BeatAndApply(Id(i));
  ExpectViewsAreTheMasters();
}

// A version that says nothing of what the worker knows gets the whole list,
// unmarked; so does a worker that does not ask for deltas (one built before
// them); a current version gets nothing.
TEST_F(MemberDeltasTest, AVersionThatSaysNothingGetsTheWholeList) {
  Join("w1");
  Join("w2");
  Join("w3");
  const uint64_t current = views_["w3"].version();
  const uint64_t stale = views_["w1"].version();
  ASSERT_LT(stale, current);
  for (uint64_t version : {uint64_t{0}, uint64_t{7} /* another run's */, current + 5 /* ahead */}) {
    pb::HeartbeatReply whole = Beat("w1", version);
    EXPECT_EQ(whole.members_size(), 3) << version;
    EXPECT_FALSE(whole.members_delta()) << version;
    EXPECT_EQ(whole.membership_version(), current) << version;
  }
  pb::HeartbeatReply old_worker = Beat("w1", stale, /*deltas=*/false);
  EXPECT_EQ(old_worker.members_size(), 3);
  EXPECT_FALSE(old_worker.members_delta());
  pb::HeartbeatReply delta = Beat("w1", stale);
  EXPECT_EQ(delta.members_size(), 2) << "w2 and w3 joined since";
  EXPECT_TRUE(delta.members_delta());
  pb::HeartbeatReply none = Beat("w1", current);
  EXPECT_EQ(none.members_size(), 0);
  EXPECT_EQ(none.membership_version(), 0u);
}

}  // namespace
}  // namespace mr::master
