// Every partition, shard and gather hook of SimImplementation is live: a variant that overrides
// only that hook with a bug that has shipped in real CP code is caught by a check against the
// reference. (The mutants proper live with the properties; these prove their hooks take effect.)
#include <gtest/gtest.h>

#include <numeric>

#include "checks.hpp"
#include "layouts/magi.hpp"

namespace cplab::simtest {
namespace {

using sim::SimImplementation;

// Per-document chunk lists concatenated document-major, the flattened stream cut into C pieces.
class ThdDocumentMajor : public SimImplementation {
 protected:
  Ints local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                   std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    if (cp == 1 || !stream.relaid) return SimImplementation::local_index(stream, map, rank);
    const Ints& bounds = stream.doc_bounds;
    Ints flat;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const std::int64_t len = bounds[i + 1] - bounds[i];
      const sim::LayoutMap one(map.layout(), cp, len, MapParams{.table = {0, len}});
      for (std::int64_t r = 0; r < cp; ++r) {
        for (std::int64_t g : one.local_index(r)) flat.push_back(bounds[i] + g);
      }
    }
    const std::int64_t piece = bounds.back() / cp;
    return Ints(flat.begin() + rank * piece, flat.begin() + (rank + 1) * piece);
  }
};

class ThdUnpaddedCuSeqlens : public SimImplementation {
 protected:
  Ints local_cu_seqlens(const Ints&, const Ints& cu_real, std::int64_t cp) const override {
    Ints local;
    for (std::int64_t bound : cu_real) local.push_back(bound / cp);
    return local;
  }
};

class ThdLengthRoundedDown : public SimImplementation {
 protected:
  std::int64_t document_slots(std::int64_t n, std::int64_t unit) const override {
    return n / unit * unit;
  }
};

class TailChunkTwoCMinusR : public SimImplementation {
 protected:
  Ints local_index(const sim::RowStream& stream, const sim::LayoutMap& map,
                   std::int64_t rank) const override {
    const std::int64_t cp = map.cp();
    if (cp == 1) return SimImplementation::local_index(stream, map, rank);
    const std::int64_t c = map.padded_len() / (2 * cp);
    Ints index;
    for (std::int64_t k = 0; k < 2 * c; ++k)
      index.push_back((k < c ? rank : (2 * cp - rank) % (2 * cp)) * c + k % c);
    return index;
  }
};

class PositionsAfterPartition : public SimImplementation {
 protected:
  Ints local_positions(const sim::StreamSlots&, const Ints& index) const override {
    Ints positions(index.size());
    std::iota(positions.begin(), positions.end(), std::int64_t{0});
    return positions;
  }
};

class MagiTiesLowerFirst : public SimImplementation {
 protected:
  bool balance_precedes(std::int64_t area_a, std::int64_t a, std::int64_t area_b,
                        std::int64_t b) const override {
    return area_a != area_b ? area_a > area_b : a < b;
  }
};

class PadLabelsZero : public SimImplementation {
 protected:
  double pad_value(const std::string& key, const TokenField& field,
                   const ShardLayout& layout) const override {
    return key == keys::labels ? 0.0 : SimImplementation::pad_value(key, field, layout);
  }
};

class GatherWithoutReorder : public SimImplementation {
 protected:
  Tensor reorder_to_global(const Tensor& rank_ordered, std::int64_t,
                           const std::vector<Ints>&) const override {
    return rank_ordered;
  }
};

class GatherBackwardKeepsLocal : public SimImplementation {
 protected:
  Tensor reduce_token_gradient(Comm& comm, const Tensor& blocks) const override {
    return rows_slice(blocks, comm.rank(), comm.rank() + 1).reshaped({blocks.size(1)});
  }
};

class GatherTokensBackwardWithoutSum : public SimImplementation {
 protected:
  Tensor reduce_gathered_gradient(Comm& comm, const Tensor& grad) const override {
    const std::int64_t slice = grad.size(0) / comm.size();
    return rows_slice(grad, comm.rank() * slice, (comm.rank() + 1) * slice);
  }
};

const Batch& docs_5_3_8() {
  static const Batch batch = packed_batch({{5, 3, 8}}, 16);
  return batch;
}

TEST(LayoutHooks, standard_sim_passes_the_checks_these_variants_fail) {
  SimImplementation sim;
  EXPECT_EQ(check_shard_against_reference(spec_for("thd", 2), docs_5_3_8(), sim), "");
  EXPECT_EQ(check_shard_against_reference(spec_for("head-tail", 3), bshd_batch(2, 13), sim), "");
  EXPECT_EQ(check_gathers_against_reference(spec_for("magi", 4), bshd_batch(2, 13), sim), "");
}

TEST(LayoutHooks, thd_document_major) {
  ThdDocumentMajor variant;
  EXPECT_NE(check_shard_against_reference(spec_for("thd", 2), packed_batch({{4, 12}}, 16), variant),
            "");
}

TEST(LayoutHooks, thd_unpadded_cu_seqlens) {
  ThdUnpaddedCuSeqlens variant;
  EXPECT_NE(
      check_shard_against_reference(spec_for("thd", 2), docs_5_3_8(), variant).find("cu_seqlens"),
      std::string::npos);
}

TEST(LayoutHooks, thd_document_length_rounded_down) {
  ThdLengthRoundedDown variant;
  EXPECT_NE(check_shard_against_reference(spec_for("thd", 2), docs_5_3_8(), variant), "");
}

TEST(LayoutHooks, head_tail_tail_chunk_two_c_minus_r) {
  TailChunkTwoCMinusR variant;
  EXPECT_NE(check_shard_against_reference(spec_for("head-tail", 3), bshd_batch(2, 13), variant)
                .find("index map"),
            std::string::npos);
}

TEST(LayoutHooks, positions_computed_after_partitioning) {
  PositionsAfterPartition variant;
  EXPECT_NE(check_shard_against_reference(spec_for("contiguous", 2), docs_5_3_8(), variant)
                .find("position_ids"),
            std::string::npos);
}

TEST(LayoutHooks, magi_ties_broken_the_other_way) {
  MagiTiesLowerFirst variant;
  LayoutSpec spec = spec_for("magi", 4);
  layouts::magi_chunk_size.set(spec, 4);  // SPEC §9 example 6: equal areas 10, 10 and 26, 26
  EXPECT_NE(
      check_shard_against_reference(spec, packed_batch({{8, 24}}, 32), variant).find("index map"),
      std::string::npos);
}

TEST(LayoutHooks, pad_labels_zero_instead_of_ignore) {
  PadLabelsZero variant;
  EXPECT_NE(check_shard_against_reference(spec_for("head-tail", 2), bshd_batch(2, 13), variant)
                .find("labels"),
            std::string::npos);
}

TEST(LayoutHooks, gather_without_the_reorder) {
  GatherWithoutReorder variant;
  EXPECT_NE(check_gathers_against_reference(spec_for("head-tail", 2), bshd_batch(1, 8), variant)
                .find("gather_token_tensor"),
            std::string::npos);
}

TEST(LayoutHooks, gather_backward_keeps_only_the_local_contribution) {
  GatherBackwardKeepsLocal variant;
  EXPECT_NE(check_gathers_against_reference(spec_for("contiguous", 3), bshd_batch(1, 12), variant)
                .find("gather_token_tensor_backward"),
            std::string::npos);
}

TEST(LayoutHooks, gather_tokens_backward_without_the_sum) {
  GatherTokensBackwardWithoutSum variant;
  EXPECT_NE(check_gathers_against_reference(spec_for("contiguous", 3), bshd_batch(1, 12), variant)
                .find("gather_tokens_backward"),
            std::string::npos);
}

}  // namespace
}  // namespace cplab::simtest
