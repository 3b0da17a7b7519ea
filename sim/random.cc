// The distributions of random.h, written out so that a seed gives the same
// numbers on every standard library.
#include "sim/random.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace mr::sim {

double Uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

uint64_t UniformIndex(Rng& rng, uint64_t n) {
  // Lemire's multiply-shift with rejection: unbiased and deterministic.
  const unsigned __int128 m = static_cast<unsigned __int128>(rng()) * n;
  uint64_t low = static_cast<uint64_t>(m);
  if (low < n) {
    const uint64_t threshold = (0 - n) % n;
    unsigned __int128 mm = m;
    while (low < threshold) {
      mm = static_cast<unsigned __int128>(rng()) * n;
      low = static_cast<uint64_t>(mm);
    }
    return static_cast<uint64_t>(mm >> 64);
  }
  return static_cast<uint64_t>(m >> 64);
}

double Exponential(Rng& rng, double mean) { return -mean * std::log1p(-Uniform01(rng)); }

double Normal(Rng& rng) {
  const double u1 = 1.0 - Uniform01(rng);  // (0, 1]
  const double u2 = Uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

uint64_t StreamSeed(uint64_t seed, const std::string& stream) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : stream) h = (h ^ c) * 1099511628211ull;
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (h | 1);  // splitmix64 finalizer
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double Dist::Mean() const {
  switch (kind) {
    case Kind::kGeometric:
      return slot_ms / phi;
    default:
      return mean_ms;
  }
}

double Dist::Sample(Rng& rng) const {
  switch (kind) {
    case Kind::kFixed:
      return mean_ms;
    case Kind::kExponential:
      return Exponential(rng, mean_ms);
    case Kind::kGeometric: {
      // Slots until the first success, on {1, 2, ...}: the task is served
      // in each slot with probability φ (Joint §3).
      const double u = 1.0 - Uniform01(rng);  // (0, 1]
      return slot_ms * (1.0 + std::floor(std::log(u) / std::log1p(-phi)));
    }
    case Kind::kPareto: {
      const double xm = mean_ms * (shape - 1.0) / shape;
      const double u = 1.0 - Uniform01(rng);
      return xm / std::pow(u, 1.0 / shape);
    }
    case Kind::kLognormal: {
      const double s2 = std::log1p((sd_ms * sd_ms) / (mean_ms * mean_ms));
      const double mu = std::log(mean_ms) - s2 / 2.0;
      return std::exp(mu + std::sqrt(s2) * Normal(rng));
    }
  }
  return mean_ms;
}

std::string Dist::ToString() const {
  std::ostringstream os;
  switch (kind) {
    case Kind::kFixed:
      os << "fixed(" << mean_ms << " ms)";
      break;
    case Kind::kExponential:
      os << "exponential(mean " << mean_ms << " ms)";
      break;
    case Kind::kGeometric:
      os << "geometric(phi " << phi << ", slot " << slot_ms << " ms)";
      break;
    case Kind::kPareto:
      os << "pareto(shape " << shape << ", mean " << mean_ms << " ms)";
      break;
    case Kind::kLognormal:
      os << "lognormal(mean " << mean_ms << " ms, sd " << sd_ms << " ms)";
      break;
  }
  return os.str();
}

namespace {

// CDF of the Pareto(shape, min) law truncated to [min, max + 1), whose
// floor is a task count in [min, max].
double TruncatedParetoCdf(const SizeDist& d, double x) {
  if (x <= d.min) return 0;
  if (x >= d.max + 1.0) return 1;
  const double tail = std::pow(d.min / (d.max + 1.0), d.shape);
  return (1.0 - std::pow(d.min / x, d.shape)) / (1.0 - tail);
}

// The first `bins` bins, with their shares renormalized to sum to 1.
std::vector<std::pair<double, int>> FacebookShares(int bins) {
  std::vector<std::pair<double, int>> out;
  double total = 0;
  for (const FacebookBin& b : FacebookBins()) {
    if (b.bin > bins) break;
    out.emplace_back(b.percent, b.maps);
    total += b.percent;
  }
  for (auto& [share, maps] : out) share /= total;
  return out;
}

}  // namespace

double SizeDist::Mean() const {
  switch (kind) {
    case Kind::kFixed:
      return fixed;
    case Kind::kPareto: {
      double mean = 0;
      for (int k = min; k <= max; ++k) {
        mean += k * (TruncatedParetoCdf(*this, k + 1.0) - TruncatedParetoCdf(*this, k));
      }
      return mean;
    }
    case Kind::kFacebook: {
      double mean = 0;
      for (const auto& [share, maps] : FacebookShares(facebook_bins)) mean += share * maps;
      return mean;
    }
  }
  return fixed;
}

int SizeDist::Sample(Rng& rng) const {
  switch (kind) {
    case Kind::kFixed:
      return fixed;
    case Kind::kPareto: {
      // Inverse CDF of the truncated law, rounded down to a task count.
      const double tail = std::pow(min / (max + 1.0), shape);
      const double u = Uniform01(rng);
      const double x = min / std::pow(1.0 - u * (1.0 - tail), 1.0 / shape);
      return std::clamp(static_cast<int>(std::floor(x)), min, max);
    }
    case Kind::kFacebook: {
      const double u = Uniform01(rng);
      double acc = 0;
      const auto shares = FacebookShares(facebook_bins);
      for (const auto& [share, maps] : shares) {
        acc += share;
        if (u < acc) return maps;
      }
      return shares.back().second;
    }
  }
  return fixed;
}

// Matchmaking Table 4 (from Zaharia et al.'s Facebook trace).
const std::vector<FacebookBin>& FacebookBins() {
  static const std::vector<FacebookBin> bins = {
      {1, 1, 1, 39, 1, 38},          {2, 2, 2, 16, 2, 16},        {3, 3, 20, 14, 10, 14},
      {4, 21, 60, 9, 50, 8},         {5, 61, 150, 6, 100, 6},     {6, 151, 300, 6, 200, 6},
      {7, 301, 500, 4, 400, 4},      {8, 501, 1500, 4, 800, 4},   {9, 1501, 1 << 30, 3, 4800, 4},
  };
  return bins;
}

}  // namespace mr::sim
