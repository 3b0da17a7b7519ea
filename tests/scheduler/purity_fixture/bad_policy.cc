// Not compiled. The scheduler_purity_catches test runs check_purity.sh on
// this directory and expects it to name each violation below.
#include <thread>
#include <fstream>
#include "common/rpc.h"

void Bad() {
  auto t = std::chrono::steady_clock::now();
  std::random_device entropy;
  std::this_thread::sleep_for(std::chrono::seconds(1));
}
#include <spdlog/spdlog.h>
