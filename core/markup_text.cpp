#include "core/markup_text.hpp"

namespace cplab {

std::string escape_markup(std::string_view text, LineBreaks breaks) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\n':
      case '\t':
        if (breaks == LineBreaks::keep) out += ch;
        break;
      default:
        if (static_cast<unsigned char>(ch) >= 0x20) out += ch;
    }
  }
  return out;
}

}  // namespace cplab
