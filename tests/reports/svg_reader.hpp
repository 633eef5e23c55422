#pragma once
// A strict little reader of the SVG the layout picture writes: every tag balanced and properly
// nested, attributes quoted, text free of raw '<' and of '&' outside the five XML entities. Gives
// back the elements in document order with their attributes, parent and text, so tests can check
// the picture's structure rather than grep its bytes.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace cplab::testing {

struct SvgElement {
  std::string name;
  std::map<std::string, std::string> attrs;
  int parent = -1;   // index of the enclosing element, -1 for the root
  std::string text;  // character data directly inside it (entities left as written)
  std::string attr(const std::string& key) const {
    const auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
};

struct SvgDocument {
  std::vector<SvgElement> elements;
  std::string error;  // empty when the text is well formed
};

inline bool entity_ok(const std::string& text, std::size_t at) {
  for (const char* entity : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"}) {
    if (text.compare(at, std::string(entity).size(), entity) == 0) return true;
  }
  return false;
}

inline SvgDocument read_svg(const std::string& text) {
  SvgDocument doc;
  std::vector<int> open;
  const auto fail = [&](const std::string& why, std::size_t at) {
    doc.error = why + " at byte " + std::to_string(at);
    return doc;
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      if (text[i] == '&' && !entity_ok(text, i)) return fail("bare '&'", i);
      if (text[i] == '>') return fail("stray '>'", i);
      if (!open.empty())
        doc.elements[open.back()].text += text[i];
      else if (!std::isspace(static_cast<unsigned char>(text[i])))
        return fail("text outside the root", i);
      ++i;
      continue;
    }
    if (text.compare(i, 2, "</") == 0) {
      const std::size_t end = text.find('>', i);
      if (end == std::string::npos) return fail("unterminated end tag", i);
      const std::string name = text.substr(i + 2, end - i - 2);
      if (open.empty() || doc.elements[open.back()].name != name)
        return fail("unbalanced </" + name + ">", i);
      open.pop_back();
      i = end + 1;
      continue;
    }
    if (open.empty() && !doc.elements.empty()) return fail("a second root element", i);
    SvgElement element;
    element.parent = open.empty() ? -1 : open.back();
    std::size_t j = i + 1;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '-'))
      ++j;
    element.name = text.substr(i + 1, j - i - 1);
    if (element.name.empty()) return fail("a tag without a name", i);
    bool closed = false;
    while (true) {
      while (j < text.size() && text[j] == ' ') ++j;
      if (j >= text.size()) return fail("unterminated tag <" + element.name, i);
      if (text[j] == '>') break;
      if (text.compare(j, 2, "/>") == 0) {
        closed = true;
        ++j;
        break;
      }
      const std::size_t eq = text.find('=', j);
      if (eq == std::string::npos || text[eq + 1] != '"') return fail("an unquoted attribute", j);
      const std::size_t close = text.find('"', eq + 2);
      if (close == std::string::npos) return fail("an unterminated attribute", j);
      const std::string key = text.substr(j, eq - j), value = text.substr(eq + 2, close - eq - 2);
      if (value.find('<') != std::string::npos) return fail("'<' inside an attribute", j);
      if (!element.attrs.emplace(key, value).second) return fail("attribute " + key + " twice", j);
      j = close + 1;
    }
    doc.elements.push_back(std::move(element));
    if (!closed) open.push_back(static_cast<int>(doc.elements.size()) - 1);
    i = j + 1;
  }
  if (!open.empty())
    return fail("<" + doc.elements[open.back()].name + "> never closed", text.size());
  if (doc.elements.empty() || doc.elements[0].name != "svg")
    return fail("the root is not <svg>", 0);
  return doc;
}

}  // namespace cplab::testing
