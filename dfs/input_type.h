// Input-data classifier (JoSS §4.3): tags a file from its first bytes.
//
// The master calls ClassifyInput() with the first bytes of a file being put
// (up to kClassifySampleBytes) and stores the tag with the file.
#pragma once

#include <cstdint>
#include <string_view>

namespace mr::dfs {

enum class InputType { kText = 0, kWeb = 1, kDna = 2 };

inline constexpr int64_t kClassifySampleBytes = 64 * 1024;

// "text", "web", "dna".
const char* InputTypeName(InputType type);

// dna: FASTA — after optional leading blank lines, a '>' header line followed
//      by lines made (almost) only of nucleotide / IUPAC letters.
// web: markup — angle-bracket tags (<name ...>, </name>, <!...>, <?...?>)
//      make up a substantial share of the sample's non-blank lines.
// text: anything else (including empty input).
InputType ClassifyInput(std::string_view sample);

}  // namespace mr::dfs
