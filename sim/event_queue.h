// EventQueue: the simulator's clock. Events are ordered by time, then by
// kind (at the same millisecond, tasks finish before jobs arrive, and both
// before any node heartbeats, so a heartbeat sees every change of its
// instant), then by insertion order — so a run is a pure function of its
// inputs. Time never runs backwards: pushing an event earlier than the last
// one popped is a programming error and aborts. Not thread-safe.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <queue>
#include <vector>

namespace mr::sim {

enum class EventKind : uint8_t {
  kMapEnd = 0,       // a = job, b = map index, c = attempt (ends in success or failure)
  kReduceEnd,        // a = job, b = reduce index, c = attempt
  kPrefetchLanded,   // a = transfer id
  kNodeDown,         // a = node, b = index into RunSpec::failures
  kNodeUp,           // a = node
  kJobArrival,       // a = index into Workload::jobs
  kTick,             // the policy's own clock (Scheduler::tick_ms)
  kHeartbeat,        // a = node, b = heartbeat generation
  kSample,           // record the backlog
};

struct Event {
  int64_t time = 0;
  EventKind kind = EventKind::kSample;
  uint64_t seq = 0;
  int32_t a = 0, b = 0, c = 0;
};

class EventQueue {
 public:
  // REQUIRES: time >= the time of the last event popped (aborts otherwise).
  void Push(int64_t time, EventKind kind, int32_t a = 0, int32_t b = 0, int32_t c = 0) {
    if (time < now_) {
      std::fprintf(stderr,
                   "mr-sim: EventQueue::Push at %lld ms (kind %d, a=%d b=%d c=%d) is before the "
                   "current time %lld ms: a host bug, time cannot run backwards\n",
                   static_cast<long long>(time), static_cast<int>(kind), a, b, c,
                   static_cast<long long>(now_));
      std::abort();
    }
    heap_.push(Event{time, kind, next_seq_++, a, b, c});
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    now_ = e.time;
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& x, const Event& y) const {
      if (x.time != y.time) return x.time > y.time;
      if (x.kind != y.kind) return x.kind > y.kind;
      return x.seq > y.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
  int64_t now_ = INT64_MIN;  // time of the last event popped
};

}  // namespace mr::sim
