// Deterministic generators of test and demo data: `mrctl gen`.
//
// The same (kind, size, seed) gives the same bytes on every machine: the
// generators use std::mt19937_64's raw output (fully specified by the C++
// standard) and their own arithmetic, never std::*_distribution.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "common/status.h"

namespace mr::tools {

enum class GenKind { kText, kWeb, kDna };

// Parses "text", "web" or "dna".
Result<GenKind> ParseGenKind(const std::string& name);

// Writes exactly `bytes` bytes to `out`. Each kind ends with a newline
// (the last line is cut short to land exactly on `bytes`, then ends in '\n').
//  text: English-like prose. Words drawn from a fixed vocabulary of a few
//        thousand words with Zipf(s≈1) frequencies, sentences with
//        capitalisation and punctuation, lines of ~60–100 characters,
//        blank lines between paragraphs.
//  web:  Wikipedia-like XML: <mediawiki><page><title>…</title><id>…</id>
//        <revision><text>… with many tags, [[links]], {{templates}} …
//        </text></revision></page>…</mediawiki>.
//  dna:  FASTA: records with a '>' header, then sequence lines of 60–80
//        bases (A, C, G, T, occasionally N).
Status Generate(GenKind kind, int64_t bytes, uint64_t seed, std::ostream& out);

}  // namespace mr::tools
