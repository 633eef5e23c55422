// The Ulysses head all-to-all (SPEC §10.5) on one rank: every rank sends rank u, for each of its
// local tokens, the heads of u's group; u places what it receives at the global slots of the
// sender's index map (all-gathered), so the sequence comes out in global order for any layout.
#include <algorithm>
#include <cstring>
#include <functional>

#include "reference/types/error.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::sim {

namespace {

// What both directions need: the group, every rank's heads, and every rank's index map.
struct HeadExchange {
  std::int64_t group = 1, me = 0, rows = 0, local_len = 0, padded_len = 0;
  std::vector<std::vector<std::int64_t>> heads_of_rank;  // [U]: local heads rank u receives
  std::int64_t width = 0;                                // the most heads any rank receives
  std::vector<std::int64_t> slots;                       // [U·rows·ℓ]: every rank's index map
  std::int64_t slot(std::int64_t p, std::int64_t b, std::int64_t k) const {
    return slots[static_cast<std::size_t>((p * rows + b) * local_len + k)];
  }
};

void check_layout(const Comm& comm, const ShardLayout& layout, const char* verb) {
  CPLAB_CHECK(static_cast<std::int64_t>(layout.index.size()) == layout.rows && layout.rows > 0,
              "{}: no recorded layout; shard a batch first", verb);
  CPLAB_CHECK(layout.cp == comm.size(),
              "{}: the layout is for C = {} ranks, the group has U = {}; the Ulysses group must be "
              "the CP group",
              verb, layout.cp, comm.size());
}

std::vector<std::int64_t> all_index_maps(Comm& comm, const ShardLayout& layout) {
  const std::int64_t len = layout.local_len();
  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(layout.rows * len));
  for (const auto& row : layout.index) {
    CPLAB_CHECK(static_cast<std::int64_t>(row.size()) == len,
                "Ulysses all-to-all: an index map row of {} tokens, expected ℓ = {}", row.size(),
                len);
    mine.insert(mine.end(), row.begin(), row.end());
  }
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(comm.size()));
  comm.all_gather(mine.data(), all.data(), mine.size(), DType::i64);
  for (std::int64_t g : all) {
    CPLAB_CHECK(g >= 0 && g < layout.padded_len,
                "Ulysses all-to-all: an index map names slot {} outside [0, L = {})", g,
                layout.padded_len);
  }
  return all;
}

HeadExchange exchange_for(Comm& comm, const ShardLayout& layout, const UlyssesHeads& heads,
                          const char* verb,
                          const std::function<std::vector<std::int64_t>(std::int64_t)>& heads_of) {
  check_layout(comm, layout, verb);
  check_ulysses_heads(heads, comm.size());
  HeadExchange x{.group = comm.size(),
                 .me = comm.rank(),
                 .rows = layout.rows,
                 .local_len = layout.local_len(),
                 .padded_len = layout.padded_len,
                 .heads_of_rank = {},
                 .width = 0,
                 .slots = {}};
  for (std::int64_t u = 0; u < x.group; ++u) {
    x.heads_of_rank.push_back(heads_of(u));
    x.width = std::max(x.width, static_cast<std::int64_t>(x.heads_of_rank.back().size()));
  }
  x.slots = all_index_maps(comm, layout);
  return x;
}

}  // namespace

std::vector<std::int64_t> SimImplementation::ulysses_heads_of(const UlyssesHeads& heads,
                                                              HeadKind kind, std::int64_t group,
                                                              std::int64_t u) const {
  const std::int64_t h = heads.of(kind);
  if (h < group) return {u * h / group};  // repeated: U/H_kv consecutive ranks share a KV head
  const std::int64_t per = h / group;
  std::vector<std::int64_t> out;
  for (std::int64_t i = u * per; i < (u + 1) * per; ++i) out.push_back(i);
  return out;
}

Tensor SimImplementation::ulysses_all_to_all(Comm& comm, const ShardLayout& layout,
                                             const Tensor& local, const UlyssesHeads& heads,
                                             HeadKind kind) {
  HeadExchange x = exchange_for(comm, layout, heads, "ulysses_all_to_all", [&](std::int64_t u) {
    return ulysses_heads_of(heads, kind, comm.size(), u);
  });
  CPLAB_CHECK(local.dim() == 4 && local.size(0) == x.rows && local.size(1) == x.local_len &&
                  local.size(2) == heads.of(kind),
              "ulysses_all_to_all: the local tensor is {}; expected [B, ℓ, H, d] = [{}, {}, {}, d]",
              tensor_brief(local), x.rows, x.local_len, heads.of(kind));
  const std::int64_t h = local.size(2), d = local.size(3);
  const std::size_t head_bytes = static_cast<std::size_t>(d) * dtype_size(local.dtype());
  const std::int64_t block_heads = x.rows * x.local_len * x.width;  // heads per block
  // Block u: for every local token, the heads of u's group (padded to the widest group).
  std::vector<std::byte> send(static_cast<std::size_t>(x.group * block_heads) * head_bytes);
  std::vector<std::byte> recv(send.size());
  for (std::int64_t u = 0; u < x.group; ++u) {
    const auto& group_heads = x.heads_of_rank[static_cast<std::size_t>(u)];
    for (std::int64_t t = 0; t < x.rows * x.local_len; ++t) {
      for (std::size_t j = 0; j < group_heads.size(); ++j) {
        const std::int64_t src = group_heads[j];
        if (src < 0) continue;  // a zero head
        CPLAB_CHECK(src < h, "ulysses_all_to_all: head {} of {} local heads", src, h);
        std::memcpy(send.data() + static_cast<std::size_t>(u * block_heads + t * x.width +
                                                           static_cast<std::int64_t>(j)) *
                                      head_bytes,
                    local.raw() + static_cast<std::size_t>(t * h + src) * head_bytes, head_bytes);
      }
    }
  }
  comm.all_to_all(send.data(), recv.data(), static_cast<std::size_t>(block_heads * d),
                  local.dtype());
  const auto n = static_cast<std::int64_t>(x.heads_of_rank[static_cast<std::size_t>(x.me)].size());
  Tensor out(local.dtype(), {x.rows, x.padded_len, n, d});
  if (out.numel() == 0) return out;  // no head here (a bug the properties report): nothing to copy
  for (std::int64_t p = 0; p < x.group; ++p) {
    for (std::int64_t b = 0; b < x.rows; ++b) {
      for (std::int64_t k = 0; k < x.local_len; ++k) {
        const std::int64_t g = x.slot(p, b, k);
        std::memcpy(out.raw() + static_cast<std::size_t>((b * x.padded_len + g) * n) * head_bytes,
                    recv.data() + static_cast<std::size_t>(p * block_heads +
                                                           (b * x.local_len + k) * x.width) *
                                      head_bytes,
                    static_cast<std::size_t>(n) * head_bytes);
      }
    }
  }
  return out;
}

Tensor SimImplementation::ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                                     const Tensor& gathered,
                                                     const UlyssesHeads& heads, HeadKind kind) {
  HeadExchange x =
      exchange_for(comm, layout, heads, "ulysses_all_to_all_inverse",
                   [&](std::int64_t u) { return ulysses_heads_of(heads, kind, comm.size(), u); });
  const auto n = static_cast<std::int64_t>(x.heads_of_rank[static_cast<std::size_t>(x.me)].size());
  CPLAB_CHECK(gathered.dim() == 4 && gathered.size(0) == x.rows &&
                  gathered.size(1) == x.padded_len && gathered.size(2) == n,
              "ulysses_all_to_all_inverse: the tensor is {}; expected [B, L, n, d] = [{}, {}, {}, "
              "d]",
              tensor_brief(gathered), x.rows, x.padded_len, n);
  const std::int64_t h = heads.of(kind), d = gathered.size(3);
  // Where each local head comes back from: the first rank (and place in its group) holding it.
  std::vector<std::pair<std::int64_t, std::int64_t>> source(static_cast<std::size_t>(h), {-1, -1});
  for (std::int64_t u = x.group - 1; u >= 0; --u) {
    const auto& group_heads = x.heads_of_rank[static_cast<std::size_t>(u)];
    for (std::size_t j = group_heads.size(); j-- > 0;) {
      if (group_heads[j] >= 0 && group_heads[j] < h)
        source[static_cast<std::size_t>(group_heads[j])] = {u, static_cast<std::int64_t>(j)};
    }
  }
  for (std::int64_t i = 0; i < h; ++i) {
    CPLAB_CHECK(source[static_cast<std::size_t>(i)].first >= 0,
                "ulysses_all_to_all_inverse: head {} of H = {} is held by no rank of U = {}", i, h,
                x.group);
  }
  const std::size_t head_bytes = static_cast<std::size_t>(d) * dtype_size(gathered.dtype());
  const std::int64_t block_heads = x.rows * x.local_len * x.width;
  // Block p: for every token rank p holds (at the slots of its index map), this rank's heads.
  std::vector<std::byte> send(static_cast<std::size_t>(x.group * block_heads) * head_bytes);
  std::vector<std::byte> recv(send.size());
  for (std::int64_t p = 0; p < x.group; ++p) {
    for (std::int64_t b = 0; b < x.rows; ++b) {
      for (std::int64_t k = 0; k < x.local_len; ++k) {
        const std::int64_t g = x.slot(p, b, k);
        std::memcpy(
            send.data() +
                static_cast<std::size_t>(p * block_heads + (b * x.local_len + k) * x.width) *
                    head_bytes,
            gathered.raw() + static_cast<std::size_t>((b * x.padded_len + g) * n) * head_bytes,
            static_cast<std::size_t>(n) * head_bytes);
      }
    }
  }
  comm.all_to_all(send.data(), recv.data(), static_cast<std::size_t>(block_heads * d),
                  gathered.dtype());
  Tensor out(gathered.dtype(), {x.rows, x.local_len, h, d});
  for (std::int64_t t = 0; t < x.rows * x.local_len; ++t) {
    for (std::int64_t i = 0; i < h; ++i) {
      const auto [u, j] = source[static_cast<std::size_t>(i)];
      std::memcpy(
          out.raw() + static_cast<std::size_t>(t * h + i) * head_bytes,
          recv.data() + static_cast<std::size_t>(u * block_heads + t * x.width + j) * head_bytes,
          head_bytes);
    }
  }
  return out;
}

}  // namespace cplab::sim
