// libFuzzer harness: the cluster-file parser (common/config.h,
// ParseClusterConfig) on arbitrary text.
//
// Checks: parsing returns a config or an InvalidArgument with a message,
// never throws, crashes or hangs; a config it accepts keeps the documented
// invariants (docs/config.md): every worker has a valid, unique id and a
// datacenter, its address (when the entry gives one: an entry of the
// allow-list may leave it to the worker's --advertise) is not the master's,
// and its host:port text parses back to the same address; so does the
// master's bind address when set.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "common/config.h"

namespace {

[[noreturn]] void Fail(const std::string& why) {
  std::fprintf(stderr, "FUZZ FAILURE: %s\n", why.c_str());
  std::abort();
}

void CheckAddress(const mr::HostPort& a) {
  auto again = mr::ParseHostPort(a.ToString());
  if (!again.ok() || !(*again == a)) Fail("address '" + a.ToString() + "' does not parse back");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = mr::ParseClusterConfig(text, "fuzz.toml");
  if (!config.ok()) {
    if (config.status().message().empty()) Fail("error without a message");
    return 0;
  }
  CheckAddress(config->master.address);
  if (config->master.bind.port != 0) CheckAddress(config->master.bind);
  std::set<std::string> ids;
  for (const mr::WorkerOptions& w : config->workers) {
    if (w.id.empty() || w.id == "." || w.id == ".." || !ids.insert(w.id).second) {
      Fail("accepted a bad or duplicate worker id '" + w.id + "'");
    }
    for (char c : w.id) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
        Fail("accepted worker id '" + w.id + "' with a character outside [A-Za-z0-9._-]");
      }
    }
    if (w.datacenter.empty()) Fail("accepted a worker without a datacenter");
    if (w.address == config->master.address) Fail("accepted a worker at the master's address");
    if (config->FindWorker(w.id) == nullptr) Fail("FindWorker misses '" + w.id + "'");
    if (w.address.port != 0) CheckAddress(w.address);
  }
  (void)config->ResolvedSecret();
  return 0;
}
