#include "properties/mask_choice.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace cplab::properties {

MaskChoice parse_mask_choice(const std::string& text) {
  for (sim::MaskFamily family : sim::kMaskFamilies) {
    if (family != sim::MaskFamily::causal && text == sim::mask_family_name(family))
      return {.family = family, .fixed = std::nullopt};
  }
  CPLAB_CHECK(text == "causal" || text == "doc-causal" || text.find(':') != std::string::npos,
              "unknown mask '{}'; masks: causal, window[:W], chunked[:K] or "
              "bidirectional[:B-E,...] (a family alone: its sizes drawn per case)",
              text);
  CPLAB_CHECK(text.rfind("bidirectional", 0) == 0 || text.find(',') == std::string::npos,
              "mask '{}': one mask per value; --masks takes them space-separated (--masks "
              "window:128 chunked), commas separate only a bidirectional mask's spans",
              text);
  const sim::AttentionMask mask = sim::parse_mask(text);
  return {.family = mask.family, .fixed = mask};
}

std::string mask_choice_text(const MaskChoice& choice) {
  return choice.fixed ? sim::mask_text(*choice.fixed) : sim::mask_family_name(choice.family);
}

std::string mask_option(sim::MaskFamily family) {
  return std::string("mask ") + sim::mask_family_name(family);
}

std::vector<CoverageRule> rules_for_masks(const std::vector<CoverageRule>& rules,
                                          const std::vector<std::string>& choices) {
  if (choices.empty()) return rules;
  std::vector<CoverageRule> kept;
  for (const CoverageRule& rule : rules) {
    bool drawable = true;
    for (sim::MaskFamily family : sim::kMaskFamilies) {
      if (rule.option != mask_option(family)) continue;
      drawable = std::any_of(choices.begin(), choices.end(), [&](const std::string& text) {
        return parse_mask_choice(text).family == family;
      });
    }
    if (drawable) kept.push_back(rule);
  }
  return kept;
}

}  // namespace cplab::properties
