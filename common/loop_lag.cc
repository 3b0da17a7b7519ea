#include "common/loop_lag.h"

#include <boost/asio/steady_timer.hpp>

namespace mr {

struct LoopLagProbe::State : std::enable_shared_from_this<State> {
  State(boost::asio::any_io_executor ex, std::chrono::milliseconds p, Observer o)
      : timer(std::move(ex)), period(p), observe(std::move(o)) {}

  void Arm() {
    due = std::chrono::steady_clock::now() + period;
    timer.expires_at(due);
    timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->stopped) return;
      const auto lag = std::chrono::steady_clock::now() - self->due;
      self->observe(std::max(0.0, std::chrono::duration<double>(lag).count()));
      self->Arm();
    });
  }

  boost::asio::steady_timer timer;
  std::chrono::milliseconds period;
  Observer observe;
  std::chrono::steady_clock::time_point due;
  bool stopped = false;
};

LoopLagProbe::LoopLagProbe(boost::asio::any_io_executor executor, std::chrono::milliseconds period,
                           Observer observe)
    : state_(std::make_shared<State>(std::move(executor), period, std::move(observe))) {}

LoopLagProbe::~LoopLagProbe() { Stop(); }

void LoopLagProbe::Start() {
  state_->stopped = false;
  state_->Arm();
}

void LoopLagProbe::Stop() {
  state_->stopped = true;
  state_->timer.cancel();
}

}  // namespace mr
