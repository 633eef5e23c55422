// The one escaper every page, picture and JUnit file writes text through (core/markup_text.hpp).
#include "core/markup_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cplab {
namespace {

TEST(MarkupText, the_five_markup_characters_become_entities) {
  EXPECT_EQ(escape_markup(R"(<a href="x">Tom & 'Jerry'</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; &apos;Jerry&apos;&lt;/a&gt;");
}

TEST(MarkupText, control_characters_are_dropped_and_line_breaks_kept_only_when_asked) {
  const std::string text = std::string("a\nb\tc\rd") + '\x01' + "e\x7f";
  EXPECT_EQ(escape_markup(text), "abcde\x7f");
  EXPECT_EQ(escape_markup(text, LineBreaks::keep), "a\nb\tcde\x7f");
}

TEST(MarkupText, utf8_passes_through_untouched) {
  EXPECT_EQ(escape_markup("Σ over ℓ · r0"), "Σ over ℓ · r0");
}

}  // namespace
}  // namespace cplab
