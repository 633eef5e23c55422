#pragma once
// --mask as layout, explain and schedule take it: any mask of SPEC §13.5, or bidirectional spans
// read from a token key of the --batch file (the image or prefix tokens a collator marks):
// `bidirectional:key=NAME` makes every maximal run of consecutive tokens of the chosen row
// (--row) whose NAME value is not zero one span, in the caller's positions. Gemma 3's
// token_type_ids (1 on image tokens) and a bool image mask work as they are.
#include <string>

#include "cli/layout_source.hpp"
#include "core/attention_mask.hpp"

namespace cplab::cli {

// Throws cplab::Error with one line: a malformed mask, a key form without --batch, a key the
// batch does not hold or that is not [B, S].
sim::AttentionMask read_mask(const std::string& text, const LayoutSourceArgs& source);

}  // namespace cplab::cli
