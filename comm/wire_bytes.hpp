#pragma once
// Bytes one rank puts on the wire for each collective, as ring algorithms move them (the model
// nccl-tests' bus bandwidth assumes). ThreadComm counts with these, and the cost model predicts a
// verb's traffic from a layout's geometry with them, so measured and predicted bytes can be
// compared.
#include <cstdint>

namespace cplab::sim::wire_bytes {

// Ring all-gather: each rank forwards C-1 blocks of `count` elements.
constexpr std::uint64_t all_gather(std::uint64_t count, std::uint64_t elem, std::uint64_t cp) {
  return (cp - 1) * count * elem;
}
// Ring reduce-scatter of C blocks of `count` elements: C-1 blocks leave every rank.
constexpr std::uint64_t reduce_scatter(std::uint64_t count, std::uint64_t elem, std::uint64_t cp) {
  return (cp - 1) * count * elem;
}
// Ring all-reduce: a reduce-scatter then an all-gather of ⌈count/C⌉-element blocks.
constexpr std::uint64_t all_reduce(std::uint64_t count, std::uint64_t elem, std::uint64_t cp) {
  return 2 * (cp - 1) * ((count + cp - 1) / cp) * elem;
}
// All-to-all: every block but the one a rank keeps.
constexpr std::uint64_t all_to_all(std::uint64_t count, std::uint64_t elem, std::uint64_t cp) {
  return (cp - 1) * count * elem;
}
constexpr std::uint64_t send(std::uint64_t count, std::uint64_t elem) { return count * elem; }

}  // namespace cplab::sim::wire_bytes
