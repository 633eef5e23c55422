#pragma once
// Text placed in markup: HTML pages, SVG pictures, JUnit XML. Every writer escapes through this one
// function, so a name with `<` or `&` reads the same on every page and no report is malformed.
#include <string>
#include <string_view>

namespace cplab {

enum class LineBreaks : bool { drop, keep };

// `text` as the content of an element or a double- or single-quoted attribute value: & < > " '
// become entities; control characters are dropped (XML 1.0 forbids them even escaped), except
// newline and tab under LineBreaks::keep (a <pre>, a JUnit failure's text).
std::string escape_markup(std::string_view text, LineBreaks breaks = LineBreaks::drop);

}  // namespace cplab
