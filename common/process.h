// What every long-running binary does after start-up: run its io_context
// until SIGINT or SIGTERM, then stop cleanly.
#pragma once

#include <functional>

#include <boost/asio/io_context.hpp>

namespace mr {

// Runs `io` on `threads` threads (this one included) until SIGINT or
// SIGTERM arrives; then calls `stop` on an io thread, stops `io`, and returns
// once every thread has left it.
void RunUntilSignal(boost::asio::io_context& io, int threads, std::function<void()> stop);

}  // namespace mr
