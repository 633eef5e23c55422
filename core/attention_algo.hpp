#pragma once
// The ways of attending across the ranks of a CP group (SPEC §13), each named as the field names
// it.
#include <cstdint>
#include <string>
#include <vector>

namespace cplab::sim {

enum class AttentionAlgo : std::uint8_t {
  all_gather,  // every rank all-gathers K and V, one step (llama3, Megatron's all-gather KV)
  ring,        // K/V passed to the next rank each step, C steps (ring / zigzag ring attention)
  ulysses,     // head all-to-all, full-sequence attention on H/U heads, all-to-all back
  usp,         // Ulysses inside each group of U ranks, a ring of R groups across (usp layout)
};

// Why a layout without a ring of Ulysses groups (no LayoutDescriptor::ring_degree) refuses the
// usp algorithm (SPEC §13.1).
inline constexpr const char* kUspAlgoNeedsUspLayout =
    "usp's ring of Ulysses groups is the usp layout's own rank structure (its ring degree R)";

const char* algo_name(AttentionAlgo algo);          // "all-gather", "ring", "ulysses", "usp"
AttentionAlgo parse_algo(const std::string& name);  // throws listing the names
const std::vector<AttentionAlgo>& all_algos();

}  // namespace cplab::sim
