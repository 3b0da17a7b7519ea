// MemberView: applying the master's members' lists and deltas (member_view.h).
#include "common/member_view.h"

#include <set>

namespace mr {

MemberView::Change MemberView::Apply(
    const google::protobuf::RepeatedPtrField<pb::WorkerInfo>& members,
    const google::protobuf::RepeatedPtrField<std::string>& dead, uint64_t version, bool delta) {
  const std::set<std::string> dead_now(dead.begin(), dead.end());
  // A whole list replaces the view: `before` keeps the old one to compare.
  std::map<std::string, Member> before;
  if (!delta) before.swap(members_);
  std::map<std::string, Member>& old = delta ? members_ : before;
  Change change;
  for (const pb::WorkerInfo& info : members) {
    const std::string& id = info.id();
    auto it = old.find(id);
    const bool was_dead = it != old.end() && it->second.dead;
    if (!delta && it != old.end()) before.erase(it);
    Member& m = members_[id];
    m.info = info;
    m.dead = dead_now.contains(id);
    if (m.dead && !was_dead) change.died.push_back(id);
    if (!m.dead && was_dead) change.revived.push_back(id);
  }
  for (const auto& [id, m] : before) {  // a whole list no longer naming a dead member
    if (m.dead) change.revived.push_back(id);
  }
  version_ = version;
  return change;
}

std::vector<std::string> MemberView::DeadIds() const {
  std::vector<std::string> ids;
  for (const auto& [id, m] : members_) {
    if (m.dead) ids.push_back(id);
  }
  return ids;
}

}  // namespace mr
