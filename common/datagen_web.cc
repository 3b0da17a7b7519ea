// The web generator: a MediaWiki export of made-up articles (see datagen.h
// for the format and datagen.cc for the rules of determinism).
#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "common/datagen_internal.h"

namespace mr::tools::datagen {
namespace {

constexpr std::string_view kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
constexpr std::string_view kHeadings[] = {
    "History", "Etymology", "Geography",  "Early life",  "Career",   "Culture", "Economy",
    "Legacy",  "Reception", "Background", "Description", "Politics", "Works",   "Distribution"};
constexpr std::string_view kTemplates[] = {"Use dmy dates", "Refimprove",      "Unreferenced",
                                           "Use mdy dates", "Citation needed", "Multiple issues"};
constexpr std::string_view kMediawikiHeader =
    "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.10/\" "
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
    "xsi:schemaLocation=\"http://www.mediawiki.org/xml/export-0.10/ "
    "http://www.mediawiki.org/xml/export-0.10.xsd\" version=\"0.10\" xml:lang=\"en\">\n"
    "  <siteinfo>\n"
    "    <sitename>Synthwiki</sitename>\n"
    "    <dbname>synthwiki</dbname>\n"
    "    <base>https://synthwiki.example.org/wiki/Main_Page</base>\n"
    "    <generator>mrctl gen web</generator>\n"
    "    <case>first-letter</case>\n"
    "    <namespaces>\n"
    "      <namespace key=\"0\" case=\"first-letter\" />\n"
    "      <namespace key=\"14\" case=\"first-letter\">Category</namespace>\n"
    "    </namespaces>\n"
    "  </siteinfo>\n";
constexpr std::string_view kMediawikiFooter = "</mediawiki>\n";

// web: a MediaWiki export of made-up articles. Each page is built in a
// staging buffer (its wiki text last), then copied to the sink; the closing
// tags after the wiki text have a fixed length, so the last page can be cut
// to end the document exactly at the size asked for.
class WebGenerator {
 public:
  WebGenerator(Sink& sink, Rng& rng) : sink_(sink), rng_(rng), vocab_(Vocabulary::Get()) {}

  void Run() {
    if (!sink_.Write(kMediawikiHeader)) return;
    for (;;) {
      BuildPage();
      const int64_t left = sink_.Remaining(sink_.cursor());
      const int64_t tail = kSuffixBytes + static_cast<int64_t>(kMediawikiFooter.size());
      if (Staged() + tail + kMarginBytes <= left) {
        if (!sink_.Write({stage_.data(), staged_}) || !sink_.Write(Suffix())) return;
        continue;
      }
      FinishWith(left - tail);
      return;
    }
  }

 private:
  // Suffix(): "</text>", the revision's sha1, the closing tags.
  static constexpr std::string_view kSuffixHead = "</text>\n      <sha1>";
  static constexpr std::string_view kSuffixTail = "</sha1>\n    </revision>\n  </page>\n";
  static constexpr int kSha1Chars = 31;
  static constexpr int64_t kSuffixBytes = kSuffixHead.size() + kSha1Chars + kSuffixTail.size();
  // A page is written whole only if this much room stays after it for the last one.
  static constexpr int64_t kMarginBytes = 4096;

  int64_t Staged() const { return static_cast<int64_t>(staged_); }

  // Ends the document with the staged page cut to `room` bytes before its suffix.
  void FinishWith(int64_t room) {
    if (room < body_begin_) {  // not even the page head fits: pad with whitespace
      int64_t pad = room + kSuffixBytes;
      if (pad > 0) {
        std::string spaces(pad, ' ');
        spaces.back() = '\n';
        if (!sink_.Write(spaces)) return;
      }
      sink_.Write(kMediawikiFooter);
      return;
    }
    while (Staged() < room) AddSection();
    staged_ = room;
    // Don't leave half an entity such as "&qu".
    std::string_view body(stage_.data() + body_begin_, staged_ - body_begin_);
    size_t amp = body.rfind('&');
    if (amp != std::string_view::npos && body.find(';', amp) == std::string_view::npos) {
      std::fill(stage_.begin() + body_begin_ + amp, stage_.begin() + staged_, ' ');
    }
    if (sink_.Write({stage_.data(), staged_}) && sink_.Write(Suffix())) {
      sink_.Write(kMediawikiFooter);
    }
  }

  // Makes room for `n` more bytes after `p` in stage_; returns the (possibly
  // moved) cursor. stage_.size() is the room, staged_ the bytes in use.
  char* Reserve(char* p, size_t n) {
    size_t used = p - stage_.data();
    if (stage_.size() - used < n) stage_.resize(std::max(stage_.size() * 2, used + n));
    return stage_.data() + used;
  }

  // "Word word …": the first word capitalised, `all_caps` capitalises all.
  char* Name(char* p, uint32_t words, bool all_caps = false) {
    for (uint32_t i = 0; i < words; ++i) {
      if (i > 0) *p++ = ' ';
      p = vocab_.PutWord(p, vocab_.Uniform(rng_), i == 0 || all_caps);
    }
    return p;
  }

  char* Date(char* p) {  // "17 March 2014"
    p = PutUint(p, Range(rng_, 1, 28));
    *p++ = ' ';
    p = Put(p, kMonths[rng_() % 12]);
    *p++ = ' ';
    return PutUint(p, Range(rng_, 2001, 2016));
  }

  char* Ref(char* p) {
    const uint64_t kind = rng_() % 4;
    if (kind == 0) {
      p = Put(p, "&lt;ref name=&quot;");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      p = PutUint(p, rng_() % 100);
      return Put(p, "&quot; /&gt;");
    }
    p = Put(p, "&lt;ref&gt;{{cite ");
    if (kind == 1) {
      p = Put(p, "book |last=");
      p = Name(p, 1);
      p = Put(p, " |first=");
      p = Name(p, 1);
      p = Put(p, " |title=");
      p = Name(p, Range(rng_, 2, 5));
      p = Put(p, " |year=");
      p = PutUint(p, Range(rng_, 1850, 2015));
      p = Put(p, " |page=");
      p = PutUint(p, Range(rng_, 1, 600));
    } else {
      p = Put(p, "web |url=http://www.");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      p = Put(p, ".org/");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      *p++ = '/';
      p = PutUint(p, rng_() % 100000);
      p = Put(p, " |title=");
      p = Name(p, Range(rng_, 2, 6));
      p = Put(p, " |accessdate=");
      p = Date(p);
    }
    return Put(p, "}}&lt;/ref&gt;");
  }

  // One sentence of wiki text with links, italics and sometimes a reference.
  // Writes at most ~2 KiB. `capital`: capitalise the first word.
  char* Sentence(char* p, bool capital) {
    uint64_t r = rng_();
    const uint32_t words = 5 + r % 21;
    const bool ref = (r / 21) % 6 == 0;
    for (uint32_t i = 0; i < words; ++i) {
      const uint64_t w = rng_();
      const uint32_t rank = vocab_.Zipf(static_cast<uint32_t>(w));
      const uint32_t bits = (w >> 32) & 63;
      if (i > 0) *p++ = ' ';
      const bool cap = capital && i == 0;
      if (bits < 4) {  // [[link]]
        p = Put(p, "[[");
        p = vocab_.PutWord(p, rank, cap);
        p = Put(p, "]]");
      } else if (bits < 6) {  // [[Target page|shown]]
        p = Put(p, "[[");
        p = Name(p, Range(rng_, 1, 3));
        *p++ = '|';
        p = vocab_.PutWord(p, rank, cap);
        p = Put(p, "]]");
      } else if (bits == 6) {  // ''italic''
        p = Put(p, "''");
        p = vocab_.PutWord(p, rank, cap);
        p = Put(p, "''");
      } else if (bits == 7 && i > 0 && i + 1 < words) {
        p = Put(p, "&amp; ");
        p = vocab_.PutWord(p, rank);
      } else {
        p = vocab_.PutWord(p, rank, cap);
      }
      if (bits >= 60 && i + 1 < words) *p++ = ',';
    }
    *p++ = '.';
    return ref ? Ref(p) : p;
  }

  // `lead`: the first sentence continues "'''Title''' is a ".
  char* Paragraph(char* p, uint32_t sentences, bool lead = false) {
    for (uint32_t i = 0; i < sentences; ++i) {
      p = Reserve(p, 4096);
      if (i > 0) *p++ = ' ';
      p = Sentence(p, !(lead && i == 0));
    }
    return p;
  }

  // "\n== Heading ==\n" and one to three paragraphs, sometimes a list.
  void AddSection() {
    char* p = Reserve(stage_.data() + staged_, 4096);
    const uint64_t r = rng_();
    p = Put(p, r % 5 == 0 ? "\n\n=== " : "\n\n== ");
    p = (r / 5) % 2 == 0 ? Put(p, kHeadings[(r / 10) % std::size(kHeadings)])
                         : Name(p, Range(rng_, 1, 3));
    p = Put(p, r % 5 == 0 ? " ===\n" : " ==\n");
    const uint32_t paragraphs = Range(rng_, 1, 3);
    for (uint32_t i = 0; i < paragraphs; ++i) {
      if (i > 0) p = Put(p, "\n\n");
      p = Paragraph(p, Range(rng_, 2, 6));
    }
    if ((r / 120) % 4 == 0) {
      const uint32_t items = Range(rng_, 2, 6);
      for (uint32_t i = 0; i < items; ++i) {
        p = Reserve(p, 1024);
        p = Put(p, "\n* [[");
        p = Name(p, Range(rng_, 1, 3));
        p = Put(p, "]] &lt;br /&gt; ");
        p = Name(p, Range(rng_, 2, 5));
      }
    }
    staged_ = p - stage_.data();
  }

  // Stages the page's head and wiki text (no closing tags; see Suffix()).
  void BuildPage() {
    char* p = Reserve(stage_.data(), 16384);  // the page head needs < 1 KiB
    const bool redirect = rng_() % 8 == 0;
    page_id_ += Range(rng_, 1, 40);
    rev_id_ += Range(rng_, 1, 5000);
    p = Put(p, "  <page>\n    <title>");
    char* title = p;
    const uint32_t title_words = Range(rng_, 1, 3);
    p = Name(p, title_words, /*all_caps=*/rng_() % 3 == 0);
    const std::string title_copy(title, p);  // stage_ may move later
    p = Put(p, "</title>\n    <ns>0</ns>\n    <id>");
    p = PutUint(p, page_id_);
    p = Put(p, "</id>\n");
    std::string target;
    if (redirect) {
      char* t = p = Put(p, "    <redirect title=\"");
      p = Name(p, Range(rng_, 1, 3));
      target.assign(t, p);
      p = Put(p, "\" />\n");
    }
    p = Put(p, "    <revision>\n      <id>");
    p = PutUint(p, rev_id_);
    p = Put(p, "</id>\n      <parentid>");
    p = PutUint(p, rev_id_ - Range(rng_, 1, 1000000));
    p = Put(p, "</parentid>\n      <timestamp>");
    p = PutUint(p, Range(rng_, 2003, 2016));
    const uint64_t t = rng_();
    *p++ = '-';
    p = PutUint2(p, 1 + t % 12);
    *p++ = '-';
    p = PutUint2(p, 1 + (t >> 8) % 28);
    *p++ = 'T';
    p = PutUint2(p, (t >> 16) % 24);
    *p++ = ':';
    p = PutUint2(p, (t >> 24) % 60);
    *p++ = ':';
    p = PutUint2(p, (t >> 32) % 60);
    p = Put(p, "Z</timestamp>\n      <contributor>\n");
    if ((t >> 40) & 1) {
      p = Put(p, "        <ip>");
      for (int i = 0; i < 4; ++i) {
        if (i > 0) *p++ = '.';
        p = PutUint(p, Range(rng_, 1, 254));
      }
      p = Put(p, "</ip>\n");
    } else {
      p = Put(p, "        <username>");
      p = Name(p, Range(rng_, 1, 2), true);
      p = Put(p, "</username>\n        <id>");
      p = PutUint(p, Range(rng_, 1, 30000000));
      p = Put(p, "</id>\n");
    }
    p = Put(p, "      </contributor>\n");
    if ((t >> 41) & 1) {
      p = Put(p, "      <comment>");
      p = Name(p, Range(rng_, 1, 4));
      p = Put(p, " [[");
      p = Name(p, Range(rng_, 1, 2));
      p = Put(p, "]]</comment>\n");
    }
    p = Put(p,
            "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            "      <text xml:space=\"preserve\">");
    body_begin_ = p - stage_.data();
    if (redirect) {
      p = Put(p, "#REDIRECT [[");
      p = Put(p, target);
      p = Put(p, "]]");
      if ((t >> 42) & 1) p = Put(p, "\n\n{{R from CamelCase}}");
      staged_ = p - stage_.data();
      return;
    }
    if ((t >> 43) & 1) {
      p = Put(p, "{{");
      p = Put(p, kTemplates[(t >> 44) % std::size(kTemplates)]);
      p = Put(p, "|date=");
      p = Put(p, kMonths[(t >> 48) % 12]);
      *p++ = ' ';
      p = PutUint(p, Range(rng_, 2006, 2016));
      p = Put(p, "}}\n");
    }
    if ((t >> 52) & 1) {
      p = Put(p, "{{Infobox ");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      p = Put(p, "\n| name = ");
      p = Put(p, title_copy);
      p = Put(p, "\n| image = ");
      p = Name(p, 2);
      p = Put(p, ".jpg\n| established = ");
      p = PutUint(p, Range(rng_, 1200, 2010));
      p = Put(p, "\n| population = ");
      p = PutUint(p, rng_() % 10000000);
      p = Put(p, "\n}}\n");
    }
    p = Put(p, "'''");
    p = Put(p, title_copy);
    p = Put(p, "''' is a ");
    p = Paragraph(p, Range(rng_, 2, 5), /*lead=*/true);
    staged_ = p - stage_.data();
    const uint32_t sections = Range(rng_, 1, 5);
    for (uint32_t i = 0; i < sections; ++i) AddSection();
    p = Reserve(stage_.data() + staged_, 2048);
    p = Put(p, "\n\n== References ==\n{{Reflist}}\n\n== External links ==\n* [http://www.");
    p = vocab_.PutWord(p, vocab_.Uniform(rng_));
    p = Put(p, ".org/ ");
    p = Name(p, Range(rng_, 1, 3));
    p = Put(p, "]\n");
    const uint32_t categories = Range(rng_, 1, 4);
    for (uint32_t i = 0; i < categories; ++i) {
      p = Put(p, "\n[[Category:");
      p = Name(p, Range(rng_, 1, 3));
      p = Put(p, "]]");
    }
    staged_ = p - stage_.data();
  }

  // The text that closes a page: always kSuffixBytes long.
  std::string_view Suffix() {
    char* p = Put(suffix_.data(), kSuffixHead);
    for (int i = 0; i < kSha1Chars; ++i) *p++ = "0123456789abcdefghijklmnopqrstuvwxyz"[rng_() % 36];
    Put(p, kSuffixTail);
    return {suffix_.data(), kSuffixBytes};
  }

  Sink& sink_;
  Rng& rng_;
  const Vocabulary& vocab_;
  std::string stage_;
  size_t staged_ = 0;       // bytes of stage_ in use
  int64_t body_begin_ = 0;  // offset of the wiki text in stage_
  std::array<char, kSuffixBytes> suffix_{};
  uint64_t page_id_ = 10;
  uint64_t rev_id_ = 600000000;
};

}  // namespace

void GenerateWeb(Sink& sink, Rng& rng) { WebGenerator(sink, rng).Run(); }

}  // namespace mr::tools::datagen
