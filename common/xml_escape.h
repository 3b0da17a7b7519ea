// Escaping text for HTML and SVG (XML) documents: the status pages
// (common/http_server.h HtmlEscape) and mr-sim's charts (sim/svg.cc).
// Header-only so that mr-sim needs no library of the daemons.
#pragma once

#include <string>
#include <string_view>

namespace mr {

// `text` with & < > " ' replaced by entities: safe inside element text and
// quoted attribute values of HTML and XML alike (&#39;, not &apos;, which
// HTML 4 lacks).
inline std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace mr
