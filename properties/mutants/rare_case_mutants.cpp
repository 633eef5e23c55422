// Mutants that only a batch of a rarer kind shows: a packed row of several documents, and a verb
// option on packed rows. Each once survived the generators, which never drew such a batch.
#include "properties/mutants/mutant.hpp"

namespace cplab::properties::mutants {

namespace {

// Document boundaries told apart by the first one only (a check against cu_seqlens[1] where
// every boundary was meant): a token at the end of the second document takes the first label of
// the third as its target. Rows of one or two documents are right.
class OnlyFirstDocumentBoundary final : public Mutant {
  using Mutant::Mutant;
  bool crosses_document(const ShardLayout& layout, std::int32_t doc, std::int32_t target_doc,
                        std::int64_t /*depth*/) const override {
    return layout.packed && (doc == 0 || (doc == 1 && target_doc != doc));
  }
};

// shard_token_tensor drops the caller's fill for THD rows and pads with 0, as if only the
// original-length BSHD form took one.
class ThdRowsFillIgnored final : public Mutant {
  using Mutant::Mutant;
  Tensor do_shard_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& value,
                               std::int64_t seq_dim, std::optional<double> fill) override {
    return SimImplementation::do_shard_token_tensor(comm, layout, value, seq_dim,
                                                    layout.packed ? std::nullopt : fill);
  }
};

}  // namespace

std::vector<ImplementationInfo> rare_case_mutants() {
  std::vector<ImplementationInfo> loss = checked_first_by(
      "rank_losses_average_to_global_shifted_loss",
      {entry<OnlyFirstDocumentBoundary>(
          "only_first_document_boundary",
          "packed rows: only the first document boundary stops a shifted target")});
  const std::vector<ImplementationInfo> gather = checked_first_by(
      "shard_then_gather_is_identity",
      {entry<ThdRowsFillIgnored>("thd_rows_fill_ignored",
                                 "shard_token_tensor pads THD rows with 0, not the given fill")});
  loss.insert(loss.end(), gather.begin(), gather.end());
  return loss;
}

}  // namespace cplab::properties::mutants
