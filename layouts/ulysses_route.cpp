#include "layouts/ulysses_route.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"

namespace cplab::sim {

std::vector<std::int64_t> standard_heads_of(const UlyssesHeads& heads, HeadKind kind,
                                            std::int64_t group, std::int64_t u) {
  const std::int64_t h = heads.of(kind);
  if (h < group) return {u * h / group};  // repeated: U/H_kv consecutive ranks share a KV head
  const std::int64_t per = h / group;
  std::vector<std::int64_t> out;
  for (std::int64_t i = u * per; i < (u + 1) * per; ++i) out.push_back(i);
  return out;
}

std::int64_t UlyssesGroup::width() const {
  std::int64_t w = 0;
  for (const auto& heads : heads_of_rank) w = std::max(w, static_cast<std::int64_t>(heads.size()));
  return w;
}

std::int64_t UlyssesGroup::mine() const {
  return static_cast<std::int64_t>(heads_of_rank[static_cast<std::size_t>(me)].size());
}

UlyssesGroup ulysses_group(const ShardLayout& layout, const UlyssesHeads& heads, HeadKind kind,
                           std::int64_t group, std::int64_t me,
                           const std::function<std::vector<std::int64_t>(std::int64_t)>& heads_of,
                           const char* verb) {
  check_recorded_layout(layout, verb);
  CPLAB_CHECK(layout.cp == group,
              "{}: the layout is for C = {} ranks, the group has U = {}; the Ulysses group must be "
              "the CP group",
              verb, layout.cp, group);
  check_ulysses_heads(heads, group);
  UlyssesGroup g{.group = group,
                 .me = me,
                 .rows = layout.rows,
                 .local_len = layout.local_len(),
                 .padded_len = layout.padded_len,
                 .local_heads = heads.of(kind),
                 .heads_of_rank = {},
                 .maps = {}};
  for (std::int64_t u = 0; u < group; ++u) g.heads_of_rank.push_back(heads_of(u));
  return g;
}

std::vector<std::int64_t> flat_index_map(const ShardLayout& layout, const char* verb) {
  const std::int64_t len = layout.local_len();
  std::vector<std::int64_t> mine;
  mine.reserve(static_cast<std::size_t>(layout.rows * len));
  for (const auto& row : layout.index) {
    CPLAB_CHECK(static_cast<std::int64_t>(row.size()) == len,
                "{}: an index map row of {} tokens, expected ℓ = {}", verb, row.size(), len);
    mine.insert(mine.end(), row.begin(), row.end());
  }
  return mine;
}

void check_index_maps(const UlyssesGroup& g, const char* verb) {
  CPLAB_CHECK(static_cast<std::int64_t>(g.maps.size()) == g.group * g.rows * g.local_len,
              "{}: {} index map entries from U = {} ranks, expected U·B·ℓ = {}", verb,
              g.maps.size(), g.group, g.group * g.rows * g.local_len);
  for (std::int64_t slot : g.maps) {
    CPLAB_CHECK(slot >= 0 && slot < g.padded_len,
                "{}: an index map names slot {} outside [0, L = {})", verb, slot, g.padded_len);
  }
}

UlyssesRoute forward_route(const UlyssesGroup& g) {
  const std::int64_t w = g.width(), block = g.block(), tokens = g.rows * g.local_len;
  const std::int64_t n = g.mine();
  UlyssesRoute route;
  route.send_source.assign(static_cast<std::size_t>(g.group * block), -1);
  for (std::int64_t u = 0; u < g.group; ++u) {
    const auto& heads = g.heads_of_rank[static_cast<std::size_t>(u)];
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::size_t j = 0; j < heads.size(); ++j) {
        const std::int64_t head = heads[j];
        if (head < 0) continue;  // a zero head
        CPLAB_CHECK(head < g.local_heads, "ulysses_all_to_all: head {} of {} local heads", head,
                    g.local_heads);
        route.send_source[static_cast<std::size_t>(
            u * block + t * w + static_cast<std::int64_t>(j))] = t * g.local_heads + head;
      }
    }
  }
  route.out_source.assign(static_cast<std::size_t>(g.rows * g.padded_len * n), -1);
  for (std::int64_t p = 0; p < g.group; ++p) {
    for (std::int64_t b = 0; b < g.rows; ++b) {
      for (std::int64_t k = 0; k < g.local_len; ++k) {
        const std::int64_t slot =
            g.maps[static_cast<std::size_t>((p * g.rows + b) * g.local_len + k)];
        for (std::int64_t j = 0; j < n; ++j) {
          route.out_source[static_cast<std::size_t>((b * g.padded_len + slot) * n + j)] =
              p * block + (b * g.local_len + k) * w + j;
        }
      }
    }
  }
  return route;
}

UlyssesRoute inverse_route(const UlyssesGroup& g, const char* verb) {
  const std::int64_t w = g.width(), block = g.block(), tokens = g.rows * g.local_len;
  const std::int64_t n = g.mine(), h = g.local_heads;
  UlyssesRoute route;
  route.send_source.assign(static_cast<std::size_t>(g.group * block), -1);
  for (std::int64_t p = 0; p < g.group; ++p) {
    for (std::int64_t b = 0; b < g.rows; ++b) {
      for (std::int64_t k = 0; k < g.local_len; ++k) {
        const std::int64_t slot =
            g.maps[static_cast<std::size_t>((p * g.rows + b) * g.local_len + k)];
        for (std::int64_t j = 0; j < n; ++j) {
          route.send_source[static_cast<std::size_t>(p * block + (b * g.local_len + k) * w + j)] =
              (b * g.padded_len + slot) * n + j;
        }
      }
    }
  }
  // Where each local head comes back from: the first rank (and place in its group) holding it.
  std::vector<std::int64_t> from(static_cast<std::size_t>(h), -1);  // u·W + j
  for (std::int64_t u = g.group - 1; u >= 0; --u) {
    const auto& heads = g.heads_of_rank[static_cast<std::size_t>(u)];
    for (std::size_t j = heads.size(); j-- > 0;) {
      if (heads[j] >= 0 && heads[j] < h)
        from[static_cast<std::size_t>(heads[j])] = u * block + static_cast<std::int64_t>(j);
    }
  }
  for (std::int64_t i = 0; i < h; ++i) {
    CPLAB_CHECK(from[static_cast<std::size_t>(i)] >= 0,
                "{}: head {} of H = {} is held by no rank of U = {}", verb, i, h, g.group);
  }
  route.out_source.resize(static_cast<std::size_t>(tokens * h));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t i = 0; i < h; ++i) {
      route.out_source[static_cast<std::size_t>(t * h + i)] =
          from[static_cast<std::size_t>(i)] + t * w;
    }
  }
  return route;
}

void move_slices(const std::byte* src, std::byte* dst, const std::vector<std::int64_t>& source,
                 std::size_t slice_bytes) {
  for (std::size_t i = 0; i < source.size(); ++i) {
    std::byte* to = dst + i * slice_bytes;
    if (source[i] < 0) {
      std::memset(to, 0, slice_bytes);
    } else {
      std::memcpy(to, src + static_cast<std::size_t>(source[i]) * slice_bytes, slice_bytes);
    }
  }
}

}  // namespace cplab::sim
