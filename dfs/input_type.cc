// Input-data classifier (JoSS §4.3). See input_type.h.
//
// Rules, applied to the sample only, after skipping a UTF-8 BOM and any
// leading whitespace (so leading blank lines too):
//  1. dna:  the first line starts with '>' and at least 90% of the later
//           non-blank lines that are not headers ('>') or comments (';')
//           consist only of nucleotide / IUPAC codes, '-' and '*' (either
//           case; there must be at least one such line).
//  2. web:  the sample starts with '<' and contains a tag somewhere, or at
//           least 20% of its non-blank lines contain a tag.
//  3. text: anything else.
// A tag is "<[A-Za-z!/?][^<>]*>" (so "a < b" in prose is not one).
//
// The caller usually passes the first kClassifySampleBytes of a larger file,
// so the sample may end mid-line. The ratio rules count complete lines only;
// a trailing fragment without '\n' is counted only when the sample holds no
// complete line the rule could judge (e.g. a one-line sample without '\n').
// Lines may end in "\r\n". No allocation; one pass per rule.
#include "dfs/input_type.h"

#include <array>
#include <string_view>

namespace mr::dfs {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

constexpr std::array<bool, 256> MakeSequenceTable() {
  std::array<bool, 256> table{};
  for (char c : std::string_view("ACGTNURYKMSWBDHV")) {
    table[static_cast<unsigned char>(c)] = true;
    table[static_cast<unsigned char>(c - 'A' + 'a')] = true;
  }
  table['-'] = true;
  table['*'] = true;
  return table;
}
constexpr std::array<bool, 256> kSequenceChar = MakeSequenceTable();

// REQUIRES: `line` is trimmed and not empty.
bool IsSequenceLine(std::string_view line) {
  for (char c : line) {
    if (!kSequenceChar[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

bool IsTagStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '!' || c == '/' || c == '?';
}

// True if `s` contains "<[A-Za-z!/?][^<>]*>". Linear: each scan for the end
// of a candidate stops at the next '<', where the following candidate starts.
bool ContainsTag(std::string_view s) {
  size_t i = s.find('<');
  while (i != std::string_view::npos) {
    if (i + 1 < s.size() && IsTagStart(s[i + 1])) {
      size_t j = s.find_first_of("<>", i + 1);
      if (j == std::string_view::npos) return false;
      if (s[j] == '>') return true;
      i = j;  // another '<': a candidate of its own
    } else {
      i = s.find('<', i + 1);
    }
  }
  return false;
}

// Splits a sample into lines (without the '\n').
class LineReader {
 public:
  explicit LineReader(std::string_view s) : rest_(s) {}

  // Returns false at the end. `*complete` is false for a trailing fragment
  // that has no '\n' (possibly cut by the sample boundary).
  bool Next(std::string_view* line, bool* complete) {
    if (rest_.empty()) return false;
    size_t nl = rest_.find('\n');
    *complete = nl != std::string_view::npos;
    if (!*complete) nl = rest_.size();
    *line = rest_.substr(0, nl);
    rest_.remove_prefix(*complete ? nl + 1 : nl);
    return true;
  }

 private:
  std::string_view rest_;
};

// Hits out of lines judged, kept apart for complete lines and the fragment.
struct Tally {
  int64_t lines = 0;
  int64_t hits = 0;
  int64_t fragment_lines = 0;
  int64_t fragment_hits = 0;

  void Add(bool complete, bool hit) {
    (complete ? lines : fragment_lines) += 1;
    (complete ? hits : fragment_hits) += hit ? 1 : 0;
  }
  // True if hits/lines >= num/den, judging the fragment only if no complete
  // line was judged; false if nothing was judged.
  bool AtLeast(int64_t num, int64_t den) const {
    int64_t n = lines > 0 ? lines : fragment_lines;
    int64_t h = lines > 0 ? hits : fragment_hits;
    return n > 0 && h * den >= n * num;
  }
};

// REQUIRES: `body` starts with '>'.
bool LooksLikeFasta(std::string_view body) {
  LineReader reader(body);
  std::string_view line;
  bool complete = false;
  reader.Next(&line, &complete);  // the first header
  Tally tally;
  while (reader.Next(&line, &complete)) {
    line = TrimRight(line);
    if (line.empty() || line[0] == '>' || line[0] == ';') continue;
    tally.Add(complete, IsSequenceLine(line));
  }
  return tally.AtLeast(9, 10);
}

bool LooksLikeMarkup(std::string_view body) {
  if (body[0] == '<' && ContainsTag(body)) return true;
  LineReader reader(body);
  std::string_view line;
  bool complete = false;
  Tally tally;
  while (reader.Next(&line, &complete)) {
    line = TrimRight(line);
    if (line.empty()) continue;
    tally.Add(complete, ContainsTag(line));
  }
  return tally.AtLeast(1, 5);
}

}  // namespace

const char* InputTypeName(InputType type) {
  switch (type) {
    case InputType::kText:
      return "text";
    case InputType::kWeb:
      return "web";
    case InputType::kDna:
      return "dna";
  }
  return "text";
}

InputType ClassifyInput(std::string_view sample) {
  if (sample.substr(0, kUtf8Bom.size()) == kUtf8Bom) sample.remove_prefix(kUtf8Bom.size());
  while (!sample.empty() && IsSpace(sample.front())) sample.remove_prefix(1);
  if (sample.empty()) return InputType::kText;
  if (sample[0] == '>' && LooksLikeFasta(sample)) return InputType::kDna;
  if (LooksLikeMarkup(sample)) return InputType::kWeb;
  return InputType::kText;
}

}  // namespace mr::dfs
