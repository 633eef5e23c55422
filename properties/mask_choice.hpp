#pragma once
// The masks a sweep draws (`cplab sweep --masks`, SPEC §13.5): a whole mask ("window:128") is
// drawn as it is; a family alone ("window") has its size or spans drawn per case around the
// case's own lengths, as the default sweep draws every family. A case carries its choice
// (`mask=` in case.hpp), so that `cplab replay` of a case draws the mask its sweep drew.
#include <optional>
#include <string>
#include <vector>

#include "core/attention_mask.hpp"
#include "properties/coverage.hpp"

namespace cplab::properties {

struct MaskChoice {
  sim::MaskFamily family = sim::MaskFamily::causal;
  std::optional<sim::AttentionMask> fixed;  // empty: a family alone
};

// "causal", "window", "window:128", "chunked", "chunked:K", "bidirectional",
// "bidirectional:B-E,...": throws cplab::Error with one line that lists the forms.
MaskChoice parse_mask_choice(const std::string& text);
// The canonical text parse_mask_choice reads back ("causal" for "doc-causal").
std::string mask_choice_text(const MaskChoice& choice);

// The option a case notes for a mask of this family ("mask causal", "mask window", ...), which
// the attention properties' coverage rules ask every job to draw.
std::string mask_option(sim::MaskFamily family);

// The rules a job of a sweep that draws only `choices` (mask_choice texts; empty: every family)
// can meet: those asking for a family it does not draw are left out.
std::vector<CoverageRule> rules_for_masks(const std::vector<CoverageRule>& rules,
                                          const std::vector<std::string>& choices);

}  // namespace cplab::properties
