// Seeded random numbers and the named distributions of the scenarios.
//
// Every draw comes from a std::mt19937_64 (the only generator the simulator
// uses) through the functions below, which are written out here instead of
// using <random>'s distributions: those are implementation-defined, and the
// simulator promises byte-identical output for the same scenario and seed.
//
// Distributions (Dist): fixed, exponential, geometric (Joint §3: service in
// whole slots with success rate φ), pareto (heavy-tailed, given its mean),
// lognormal (given mean and standard deviation; JoSS Table 6 arrival
// statistics). Job sizes (SizeDist): fixed, truncated discrete Pareto
// (Pandas §VII-A1c, shape 1.9), the Facebook bins of Matchmaking Table 4.
//
// Not thread-safe; one generator per stream.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mr::sim {

using Rng = std::mt19937_64;

// Uniform in [0, 1) with 53 random bits.
double Uniform01(Rng& rng);
// Uniform integer in [0, n). REQUIRES: n > 0.
uint64_t UniformIndex(Rng& rng, uint64_t n);
// Exponential with the given mean.
double Exponential(Rng& rng, double mean);
// Standard normal (Box-Muller, one value per call).
double Normal(Rng& rng);
// A derived seed for an independent stream ("workload", "service", ...).
uint64_t StreamSeed(uint64_t seed, const std::string& stream);

// A non-negative duration distribution, in milliseconds.
struct Dist {
  enum class Kind { kFixed, kExponential, kGeometric, kPareto, kLognormal };
  Kind kind = Kind::kFixed;
  double mean_ms = 0;   // fixed, exponential, pareto, lognormal
  double sd_ms = 0;     // lognormal
  double shape = 2.5;   // pareto (> 1)
  double phi = 0.25;    // geometric: completion probability per slot (Joint §3)
  double slot_ms = 1000;  // geometric: slot length

  double Mean() const;
  double Sample(Rng& rng) const;
  // "exponential(mean 4000 ms)", for docs and errors.
  std::string ToString() const;
};

// Number of map tasks per job.
struct SizeDist {
  enum class Kind { kFixed, kPareto, kFacebook };
  Kind kind = Kind::kFixed;
  int fixed = 1;
  double shape = 1.9;   // pareto: P(X > x) ∝ x^-shape on [min, max + 1), rounded down
  int min = 1;
  int max = 400;
  int facebook_bins = 9;  // Matchmaking Table 4: the first n bins

  double Mean() const;
  int Sample(Rng& rng) const;
};

// Matchmaking Table 4: bin i has `percent` of Facebook's jobs; the benchmark
// ran `maps` maps for a job of that bin.
struct FacebookBin {
  int bin;
  int min_maps, max_maps;
  double percent;
  int maps;
  int benchmark_jobs;
};
const std::vector<FacebookBin>& FacebookBins();

}  // namespace mr::sim
