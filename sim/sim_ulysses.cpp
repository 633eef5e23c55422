// The Ulysses head all-to-all (SPEC §10.5) on one rank: every rank sends rank u, for each of its
// local tokens, the heads of u's group; u places what it receives at the global slots of the
// sender's index map (all-gathered), so the sequence comes out in global order for any layout.
// The index arrays are layouts/ulysses_route.hpp's, shared with the GPU path.
#include <functional>

#include "core/error.hpp"
#include "layouts/ulysses_route.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {

namespace {

UlyssesGroup group_for(Comm& comm, const ShardLayout& layout, const UlyssesHeads& heads,
                       HeadKind kind, const char* verb,
                       const std::function<std::vector<std::int64_t>(std::int64_t)>& heads_of) {
  UlyssesGroup g = ulysses_group(layout, heads, kind, comm.size(), comm.rank(), heads_of, verb);
  const std::vector<std::int64_t> mine = flat_index_map(layout, verb);
  g.maps.resize(mine.size() * static_cast<std::size_t>(g.group));
  comm.all_gather(bytes_of(mine), bytes_of(g.maps), mine.size(), DType::i64);
  check_index_maps(g, verb);
  return g;
}

// src → send (route.send_source), one all-to-all, recv → out (route.out_source).
void exchange(Comm& comm, const UlyssesGroup& g, const UlyssesRoute& route, const Tensor& src,
              Tensor& out, std::int64_t d) {
  const std::size_t slice_bytes = static_cast<std::size_t>(d) * dtype_size(src.dtype());
  std::vector<std::byte> send(route.send_source.size() * slice_bytes), recv(send.size());
  move_slices(src.raw(), send.data(), route.send_source, slice_bytes);
  comm.all_to_all(bytes_of(send), bytes_of(recv), static_cast<std::size_t>(g.block() * d),
                  src.dtype());
  if (out.numel() == 0) return;  // no head here (a bug the properties report): nothing to place
  move_slices(recv.data(), out.raw(), route.out_source, slice_bytes);
}

}  // namespace

std::vector<std::int64_t> SimImplementation::ulysses_heads_of(const UlyssesHeads& heads,
                                                              HeadKind kind, std::int64_t group,
                                                              std::int64_t u) const {
  return standard_heads_of(heads, kind, group, u);
}

Tensor SimImplementation::do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout,
                                                const Tensor& local, const UlyssesHeads& heads,
                                                HeadKind kind) {
  const UlyssesGroup g =
      group_for(comm, layout, heads, kind, "ulysses_all_to_all",
                [&](std::int64_t u) { return ulysses_heads_of(heads, kind, comm.size(), u); });
  const std::int64_t d = local.size(3);
  Tensor out(local.dtype(), {g.rows, g.padded_len, g.mine(), d});
  exchange(comm, g, forward_route(g), local, out, d);
  return out;
}

Tensor SimImplementation::do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                                        const Tensor& gathered,
                                                        const UlyssesHeads& heads, HeadKind kind) {
  const char* verb = "ulysses_all_to_all_inverse";
  const UlyssesGroup g = group_for(comm, layout, heads, kind, verb, [&](std::int64_t u) {
    return ulysses_heads_of(heads, kind, comm.size(), u);
  });
  // The contract's n is the standard split's; a step that splits otherwise (a mutant's) must not
  // be handed more heads than it sends.
  CPLAB_CHECK(
      gathered.size(2) == g.mine(),
      "ulysses_all_to_all_inverse: the tensor is {}; this rank's heads_of gives it {} heads",
      tensor_brief(gathered), g.mine());
  const std::int64_t d = gathered.size(3);
  const UlyssesRoute route = inverse_route(g, verb);
  Tensor out(gathered.dtype(), {g.rows, g.local_len, g.local_heads, d});
  exchange(comm, g, route, gathered, out, d);
  return out;
}

}  // namespace cplab::sim
