// MemberView: a worker's copy of the cluster's members, as the master's
// replies tell it (docs/wire-format.md, cluster.Register and
// cluster.Heartbeat): every member's WorkerInfo, whether the master has
// declared it dead, and the membership_version of what it holds.
//
// A RegisterReply carries the whole list; a HeartbeatReply carries it when
// the worker's version is not the master's: the whole list again, or (when
// the beat asked for member_deltas and the master knows what changed since
// the worker's version) only the members changed since, `members_delta`
// set (master/membership.cc, Master::FillMembers). Applying the replies in
// the order the master sent them keeps the view equal to the master's list.
//
// Users: the worker's master link (Worker::LearnMembers) and the emulated
// fleet of bench/master_scale, which checks its views against the master.
// Not thread-safe: the worker keeps it on its master link's strand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <google/protobuf/repeated_ptr_field.h>

#include "proto/cluster.pb.h"

namespace mr {

class MemberView {
 public:
  struct Member {
    pb::WorkerInfo info;
    bool dead = false;
  };
  // What an Apply changed in the members' liveness, as ids.
  struct Change {
    std::vector<std::string> died;     // listed dead now, not before
    std::vector<std::string> revived;  // dead before, not now
  };

  // Applies one reply's members. `delta` false: `members` is every member
  // and the view becomes it. `delta` true: `members` holds those changed
  // since version(); each is replaced, and is dead iff listed in `dead`;
  // the others stay as they were. An id in `dead` that is not in `members`
  // is ignored (the master never sends one).
  Change Apply(const google::protobuf::RepeatedPtrField<pb::WorkerInfo>& members,
               const google::protobuf::RepeatedPtrField<std::string>& dead, uint64_t version,
               bool delta);

  // The membership_version of the last list applied; 0 before the first.
  uint64_t version() const { return version_; }
  // By id.
  const std::map<std::string, Member>& members() const { return members_; }
  // The ids of the dead members, in id order.
  std::vector<std::string> DeadIds() const;

 private:
  std::map<std::string, Member> members_;
  uint64_t version_ = 0;
};

}  // namespace mr
