// Awaiting an Asio operation without exceptions: `co_await op(..., kTuple)`
// yields (error_code, results...), so a failed read is a value to look at.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace mr {

inline constexpr auto kTuple = boost::asio::as_tuple(boost::asio::use_awaitable);

}  // namespace mr
