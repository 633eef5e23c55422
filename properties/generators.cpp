#include "properties/generators.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>

namespace cplab::properties {

namespace gen = rc::gen;
using I = std::int64_t;

namespace {

// One of a few values (shrinks toward the first).
template <typename T>
rc::Gen<T> pick(std::initializer_list<T> values) {
  return gen::elementOf(std::vector<T>(values));
}

I ceil_to(I x, I m) { return x + ((m - x % m) % m); }

I occupancy(const std::vector<Document>& row) {
  return std::accumulate(row.begin(), row.end(), I{0},
                         [](I s, const Document& d) { return s + d.real + d.extra; });
}

// Slots a packed row needs under the layout: thd pads every document to 2C (SPEC §3).
I packed_row_len(const LayoutEntry& entry, const LayoutSpec& spec,
                 const std::vector<Document>& row) {
  if (!entry.local_documents || spec.cp == 1) return occupancy(row);
  I len = 0;
  for (const Document& d : row) len += ceil_to(d.real, 2 * spec.cp);
  return len;
}

rc::Gen<int> gen_permille(int full_weight) {
  return gen::weightedOneOf<int>({{3, gen::just(0)},
                                  {3, gen::inRange(1, 500)},
                                  {static_cast<std::size_t>(full_weight), gen::just(1000)}});
}

}  // namespace

std::string cp_class(I cp) {
  if (cp == 1) return "cp=1";
  if ((cp & (cp - 1)) == 0) return "cp=pow2";
  return cp % 2 ? "cp=odd" : "cp=even";
}

void validate_gen_options(const GenOptions& options) {
  for (const I cp : options.cp) {
    CPLAB_CHECK(cp >= 1 && cp <= 1024, "--cp {}: a CP size must be in [1, 1024] (one thread per rank)", cp);
  }
  CPLAB_CHECK(options.max_tokens >= 1, "--max-tokens {}: must be at least 1", options.max_tokens);
}

rc::Gen<I> gen_cp(const std::vector<I>& allowed) {
  if (!allowed.empty()) return gen::elementOf(allowed);
  return gen::weightedOneOf<I>({{3, gen::just<I>(1)},
                                {5, pick<I>({2, 4, 8})},
                                {10, pick<I>({3, 5, 6, 7})},
                                {3, gen::inRange<I>(9, 17)},
                                {1, gen::inRange<I>(17, 65)}});
}

rc::Gen<I> gen_bshd_len(const LayoutEntry& entry, const LayoutSpec& spec, I max_tokens) {
  const I unit = entry.pad_unit(spec);
  const rc::Gen<I> near_multiple = gen::exec([=] {
    const I base = *pick<I>({spec.cp, 2 * spec.cp, unit});
    const I q = *gen::inRange<I>(0, 4);
    const I delta = *pick<I>({0, -1, 1});
    return std::clamp<I>(q * base + delta, 1, max_tokens);
  });
  return gen::weightedOneOf<I>(
      {{3, near_multiple}, {1, gen::inRange<I>(1, std::min<I>(41, max_tokens + 1))}});
}

rc::Gen<std::vector<Document>> gen_packed_row(const LayoutEntry& entry, const LayoutSpec& spec,
                                              I max_tokens) {
  const I two_c = 2 * spec.cp;
  const auto lengths = [](I count_lo, I count_hi, rc::Gen<I> length) {
    return gen::exec([=] {
      const I count = *gen::inRange<I>(count_lo, count_hi);
      return *gen::container<std::vector<I>>(static_cast<std::size_t>(count), length);
    });
  };
  const rc::Gen<std::vector<I>> many_tiny = lengths(3, 13, gen::inRange<I>(0, 4));
  const rc::Gen<std::vector<I>> zeros_and_ones = lengths(1, 9, pick<I>({0, 1}));
  const rc::Gen<std::vector<I>> near_2c =
      lengths(1, 5, gen::exec([=] {
                return std::max<I>(0, *gen::inRange<I>(0, 3) * two_c + *pick<I>({0, -1, 1}));
              }));
  const rc::Gen<std::vector<I>> mixed = lengths(1, 7, gen::inRange<I>(0, 25));
  const rc::Gen<std::vector<I>> one_huge = gen::exec([=] {
    std::vector<I> docs =
        *gen::container<std::vector<I>>(*gen::inRange<std::size_t>(0, 3), gen::inRange<I>(0, 4));
    const I huge =
        *gen::inRange<I>(std::min(two_c, max_tokens / 2), std::max<I>(two_c + 1, max_tokens / 2));
    docs.insert(
        docs.begin() + static_cast<std::ptrdiff_t>(*gen::inRange<std::size_t>(0, docs.size() + 1)),
        huge);
    return docs;
  });
  return gen::exec([=] {
    const std::vector<I> reals = *gen::weightedOneOf<std::vector<I>>(
        {{2, many_tiny}, {1, one_huge}, {2, zeros_and_ones}, {3, near_2c}, {2, mixed}});
    const bool caller_pads =
        *gen::weightedOneOf<bool>({{4, gen::just(false)}, {1, gen::just(true)}});
    std::vector<Document> row;
    for (I real : reals) {
      const I extra = caller_pads ? *pick<I>({0, 1, 2, 3}) : 0;
      row.push_back({real, extra});
    }
    // Bound the padded length by dropping documents from the end (at least one stays).
    while (row.size() > 1 && packed_row_len(entry, spec, row) > max_tokens) row.pop_back();
    if (packed_row_len(entry, spec, row) > max_tokens)
      row[0] = {std::min(row[0].real, max_tokens / 2), 0};
    return row;
  });
}

I estimated_padded_len(const LayoutEntry& entry, const Case& c) {
  if (c.spec.cp == 1) return c.seq_len;
  const I unit = entry.pad_unit(c.spec);
  I len = ceil_to(c.seq_len, unit);
  for (const auto& row : c.docs)
    len = std::max(len, ceil_to(std::max(packed_row_len(entry, c.spec, row), c.seq_len), unit));
  return len;
}

rc::Gen<Case> gen_case(const LayoutEntry& entry, const GenOptions& options) {
  const rc::Gen<Case> constructive = gen::exec([entry, options] {
    Case c;
    c.spec.layout = entry.name;
    c.spec.cp = entry.cp_off ? 1 : *gen_cp(options.cp);
    if (entry.uses_pad_multiple)
      c.spec.pad_multiple = *gen::weightedOneOf<I>(
          {{3, gen::just<I>(2)}, {2, gen::just<I>(1)}, {1, pick<I>({3, 4})}});
    if (entry.uses_chunk_size) {
      const I largest = std::max<I>(2, 96 / c.spec.cp);
      c.spec.chunk_size = *gen::weightedOneOf<I>(
          {{3, gen::inRange<I>(1, 5)}, {1, gen::inRange<I>(1, largest + 1)}});
    }
    c.spec.num_chunks =
        *gen::weightedOneOf<I>({{6, gen::just<I>(1)}, {3, gen::just<I>(2)}, {1, gen::just<I>(3)}});
    const bool packed = entry.packed_rows && (!entry.bshd_rows || *gen::arbitrary<bool>());
    if (packed) {
      c.rows = c.spec.num_chunks;
      I longest = 0;
      for (I b = 0; b < c.rows; ++b) {
        c.docs.push_back(*gen_packed_row(entry, c.spec, options.max_tokens));
        longest = std::max(longest, occupancy(c.docs.back()));
      }
      const I row_padding =
          *gen::weightedOneOf<I>({{3, gen::just<I>(0)}, {1, gen::inRange<I>(1, 6)}});
      c.seq_len = std::max<I>(1, longest + row_padding);
    } else {
      c.rows =
          c.spec.num_chunks * *gen::weightedOneOf<I>({{3, gen::just<I>(1)}, {1, gen::just<I>(2)}});
      c.seq_len = *gen_bshd_len(entry, c.spec, options.max_tokens);
    }
    const I budget_vocab =
        options.logits_budget / std::max<I>(1, c.rows * estimated_padded_len(entry, c));
    const I vocab_cap = std::clamp<I>(budget_vocab, 2, 4096);
    c.vocab = *gen::weightedOneOf<I>({{3, gen::inRange<I>(2, std::min<I>(17, vocab_cap + 1))},
                                      {2, gen::inRange<I>(2, vocab_cap + 1)}});
    c.spec.pad_token_id = *gen::inRange<I>(0, c.vocab);
    c.pad_content_permille =
        *gen::weightedOneOf<int>({{2, gen::just(0)}, {1, gen::inRange(1, 400)}});
    c.ignore_permille = *gen_permille(1);
    c.invalid_permille = *gen_permille(1);
    c.spec.pad_policy = *gen::weightedOneOf<PadPolicy>(
        {{3, gen::just(PadPolicy::spec)}, {1, gen::just(PadPolicy::zero)}});
    c.spec.shard_primary = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
    c.primary = *gen::weightedOneOf<Primary>(
        {{3, gen::just(Primary::ids)}, {1, gen::just(Primary::embeds)}});
    c.dim = *gen::inRange<I>(1, 5);
    c.dtype = *pick<DType>(
        {DType::f32, DType::i64, DType::bf16, DType::f16, DType::i32, DType::u8, DType::b8});
    c.positions = packed ? *gen::weightedOneOf<PositionKind>({{3, gen::just(PositionKind::none)},
                                                              {1, gen::just(PositionKind::per_row)},
                                                              {1, gen::just(PositionKind::mrope)}})
                         : *gen::weightedOneOf<PositionKind>({{3, gen::just(PositionKind::none)},
                                                              {1, gen::just(PositionKind::per_row)},
                                                              {1, gen::just(PositionKind::shared)},
                                                              {1, gen::just(PositionKind::mrope)}});
    c.loss_mask = *gen::arbitrary<bool>();
    c.padding_mask = *gen::arbitrary<bool>();
    c.extra_key = *gen::arbitrary<bool>();
    c.seed = *gen::inRange<std::uint64_t>(0, 1ull << 32);
    return c;
  });
  return gen::shrink(constructive, [allowed = options.cp](const Case& c) {
    return rc::seq::fromContainer(domain_shrinks(c, allowed));
  });
}

std::vector<Case> domain_shrinks(const Case& c, const std::vector<I>& allowed_cp) {
  std::vector<Case> out;
  const auto add = [&](Case smaller) {
    if (!(smaller == c)) out.push_back(std::move(smaller));
  };
  // Fewer microbatches: drop the last one.
  if (c.spec.num_chunks > 1) {
    Case s = c;
    s.spec.num_chunks -= 1;
    s.rows -= c.rows_per_microbatch();
    if (s.packed()) s.docs.pop_back();
    add(s);
  }
  // Fewer documents, shorter documents, no caller padding.
  for (std::size_t b = 0; b < c.docs.size(); ++b) {
    for (std::size_t i = 0; i < c.docs[b].size() && c.docs[b].size() > 1; ++i) {
      Case s = c;
      s.docs[b].erase(s.docs[b].begin() + static_cast<std::ptrdiff_t>(i));
      add(s);
    }
    for (std::size_t i = 0; i < c.docs[b].size(); ++i) {
      Case s = c;
      s.docs[b][i].real /= 2;
      s.docs[b][i].extra = 0;
      add(s);
    }
  }
  // Shorter rows: BSHD halves and trims S; packed drops its row padding.
  if (!c.packed() && c.seq_len > 1) {
    for (I len : {c.seq_len / 2, c.seq_len - 1}) {
      Case s = c;
      s.seq_len = std::max<I>(1, len);
      add(s);
    }
  }
  if (c.packed()) {
    Case s = c;
    s.seq_len = 1;
    for (const auto& row : c.docs) s.seq_len = std::max(s.seq_len, occupancy(row));
    add(s);
  }
  if (!c.packed() && c.rows > c.spec.num_chunks) {
    Case s = c;
    s.rows = c.spec.num_chunks;
    add(s);
  }
  // Smaller C, then simpler data.
  const auto allowed = [&](I cp) {
    return allowed_cp.empty() ||
           std::find(allowed_cp.begin(), allowed_cp.end(), cp) != allowed_cp.end();
  };
  for (I cp : {I{1}, I{2}, c.spec.cp / 2, c.spec.cp - 1}) {
    if (cp >= 1 && cp < c.spec.cp && allowed(cp)) {
      Case s = c;
      s.spec.cp = cp;
      add(s);
    }
  }
  Case simple = c;
  simple.ignore_permille = simple.invalid_permille = simple.pad_content_permille = 0;
  add(simple);
  simple = c;
  simple.loss_mask = simple.padding_mask = simple.extra_key = false;
  simple.positions = PositionKind::none;
  simple.primary = Primary::ids;
  simple.dim = 1;
  add(simple);
  return out;
}

void showValue(const Case& c, std::ostream& os) { os << print_case(c); }

}  // namespace cplab::properties
