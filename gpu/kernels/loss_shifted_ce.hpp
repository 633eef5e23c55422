#pragma once
// The shifted cross-boundary loss of SPEC §6 on one rank, in three launches:
//   pack_target_labels   the labels (and document ids) each peer needs, for one all-to-all;
//   shifted_targets      per local token: its target (local, or received from the owner of g+1 by
//                        the closed-form map), whether it contributes, and the local count;
//   fused_shifted_ce     per row of logits, forward and backward at once: an online log-sum-exp
//                        over V, then the gradient (softmax − onehot)·C/N, written once.
#include <cstdint>

#include "gpu/device.hpp"
#include "gpu/kernels/layout_map.hpp"

namespace cplab::gpu {

// out[((p·rows + b)·width + i)·2 + {0, 1}] = (labels[b·ℓ + k], doc_ids[b·ℓ + k]) for
// k = send_k[p·width + i]; k = -1 packs (IGNORE, 0), a slot nobody reads.
void pack_target_labels(const std::int64_t* labels, const std::int32_t* doc_ids, std::int64_t rows,
                        std::int64_t local_len, const std::int64_t* send_k, std::int64_t cp,
                        std::int64_t width, std::int64_t* out, Stream stream);

struct ShiftedTargets {
  MapView map;  // device arrays
  std::int64_t rank = 0;
  std::int64_t rows = 0;
  std::int64_t depth = 1;                 // SPEC §6.1: the target is the label `depth` slots ahead
  bool packed = false;                    // documents bound targets
  const std::int64_t* labels = nullptr;   // [rows·ℓ] this rank's (unshifted) labels
  const std::int32_t* doc_ids = nullptr;  // [rows·ℓ]
  const std::uint8_t* valid = nullptr;    // [rows·ℓ]
  const std::int64_t* recv_index =
      nullptr;  // [ℓ] gpu/host/shifted_target.hpp plan (shared by the rows)
  const std::int64_t* received =
      nullptr;             // the all-to-all result, laid out as pack_target_labels packs
  std::int64_t width = 0;  // slots per (peer, row) in `received`
  std::int64_t vocab = 0;
  std::int64_t* targets =
      nullptr;  // out [rows·ℓ]: the target class of a contributing token, else -1
  std::int64_t* count = nullptr;  // device scalar, increased by the contributing tokens
  std::int64_t* bad =
      nullptr;  // ErrorSlot: first token whose target is outside [0, V) and not IGNORE
};
void shifted_targets(const ShiftedTargets& args, Stream stream);

enum class LossElem : std::uint8_t { f32, bf16 };

struct FusedCe {
  const void* logits = nullptr;  // [rows, V]
  LossElem logits_elem = LossElem::f32;
  void* grad = nullptr;  // [rows, V]
  LossElem grad_elem = LossElem::f32;
  std::int64_t rows = 0;
  std::int64_t vocab = 0;
  const std::int64_t* targets = nullptr;  // [rows]: class, or -1 for a row that does not contribute
  float scale = 0.0f;                     // C / N (0 when N = 0)
  float* row_loss = nullptr;              // out [rows]: CE of contributing rows, 0 elsewhere
};
void fused_shifted_ce(const FusedCe& args, Stream stream);

// *out = Σ values[i] in double, in one fixed order (the same bits on every run).
void sum_in_order(const float* values, std::int64_t n, double* out, Stream stream);

}  // namespace cplab::gpu
