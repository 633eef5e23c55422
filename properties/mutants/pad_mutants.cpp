// Mutants of what the sharder puts in the slots it adds, and of positions (SPEC §1-§2).
#include <numeric>

#include "properties/case_data.hpp"
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

// Pad labels 0 instead of IGNORE: every pad slot trains on token 0.
class PadLabelsZero final : public Mutant {
  using Mutant::Mutant;
  double pad_value(const std::string& key, const TokenField& field,
                   const ShardLayout& layout) const override {
    return key == keys::labels ? 0.0 : SimImplementation::pad_value(key, field, layout);
  }
};

// input_ids padded with 0 whatever the pad token id (the zero policy leaking into the spec one).
class PadIdsIgnorePadToken final : public Mutant {
  using Mutant::Mutant;
  double pad_value(const std::string& key, const TokenField& field,
                   const ShardLayout& layout) const override {
    return field.rule == PadRule::pad_token ? 0.0
                                            : SimImplementation::pad_value(key, field, layout);
  }
};

// padding_mask padded with false (0) like every other mask: pad slots claim to be real.
class PaddingMaskPaddedFalse final : public Mutant {
  using Mutant::Mutant;
  double pad_value(const std::string& key, const TokenField& field,
                   const ShardLayout& layout) const override {
    return key == keys::padding_mask ? 0.0 : SimImplementation::pad_value(key, field, layout);
  }
};

// Extra token-aligned keys padded with 0, not with the value they declare.
class ExtraKeyPadValueDropped final : public Mutant {
  using Mutant::Mutant;
  double pad_value(const std::string& key, const TokenField& field,
                   const ShardLayout& layout) const override {
    return key == kExtraKey ? 0.0 : SimImplementation::pad_value(key, field, layout);
  }
};

// Position ids computed after partitioning: arange(ℓ) on every rank.
class PositionsAfterPartitioning final : public Mutant {
  using Mutant::Mutant;
  std::vector<std::int64_t> local_positions(
      const sim::StreamSlots&, const std::vector<std::int64_t>& local_index) const override {
    std::vector<std::int64_t> positions(local_index.size());
    std::iota(positions.begin(), positions.end(), std::int64_t{0});
    return positions;
  }
};

}  // namespace

std::vector<ImplementationInfo> pad_mutants() {
  std::vector<ImplementationInfo> entries = {
      entry<PadLabelsZero>("pad_labels_zero", "pad slots get label 0 instead of IGNORE"),
      entry<PadIdsIgnorePadToken>("pad_ids_ignore_pad_token",
                                  "input_ids padded with 0 instead of the pad token id"),
      entry<PaddingMaskPaddedFalse>("padding_mask_padded_false",
                                    "padding_mask padded with false: pad slots look real"),
      entry<ExtraKeyPadValueDropped>("extra_key_pad_value_dropped",
                                     "extra token keys padded with 0, not their declared value"),
      entry<PositionsAfterPartitioning>(
          "positions_after_partitioning",
          "position ids computed after the split: arange(ℓ) per rank"),
  };
  return checked_first_by("token_data_travels_with_its_token", std::move(entries));
}

}  // namespace cplab::properties::mutants
