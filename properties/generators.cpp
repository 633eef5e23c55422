#include "properties/generators.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>

#include "core/layout_option.hpp"
#include "layouts/layout_descriptor.hpp"
#include "layouts/row_acceptance.hpp"
#include "properties/mask_choice.hpp"

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

// Whether the layout pads and maps rows of this spec (C > 1, or C = 1 where its options ask).
bool partitions(const LayoutEntry& entry, const LayoutSpec& spec) {
  return sim::partitions(*entry.descriptor, spec);
}

// Slots a packed row needs under the layout: one that re-lays documents pads each to its
// document unit (SPEC §3).
I packed_row_len(const LayoutEntry& entry, const LayoutSpec& spec,
                 const std::vector<Document>& row) {
  if (entry.descriptor->document_unit == nullptr || !partitions(entry, spec)) return occupancy(row);
  const I unit = entry.descriptor->document_unit(spec);
  I len = 0;
  for (const Document& d : row) len += ceil_to(d.real, unit);
  return len;
}

// The multiple every document must occupy when the padding is the caller's (the row rule of
// documents; 0: the layout pads). At C = 1 too: the caller pads for the layout as it would at C.
I caller_unit(const LayoutEntry& entry, const LayoutSpec& spec) {
  const sim::RowRule& rule = entry.descriptor->row_rule;
  return rule.of == sim::RowRule::Of::documents ? rule.multiple(spec) : 0;
}

sim::RowRule::Of rule_of(const LayoutEntry& entry) { return entry.descriptor->row_rule.of; }

// Whether a layout whose padding is the caller's takes every row of the case (the contract's row
// rule; every other layout: true, its rows are fitted where they are drawn).
bool caller_padded(const LayoutEntry& entry, const Case& c) {
  if (caller_unit(entry, c.spec) == 0) return true;
  for (I b = 0; b < (c.packed() ? static_cast<I>(c.docs.size()) : 1); ++b) {
    sim::RowShape row = sim::bshd_row(c.seq_len);
    if (c.packed()) {
      std::vector<I> slots;
      for (const Document& d : c.docs[static_cast<std::size_t>(b)])
        slots.push_back(d.real + d.extra);
      row = sim::packed_row(std::move(slots), c.seq_len);
    }
    if (!sim::rule_refusal(*entry.descriptor, c.spec, row).empty()) return false;
  }
  return true;
}

// A row of documents of whole units (now and then an empty one, or a long one), some with the
// caller's own padding after fewer real tokens; at least one unit in all.
rc::Gen<std::vector<Document>> gen_caller_padded_row(I unit, I max_tokens) {
  return gen::exec([=] {
    const I most = std::max<I>(1, max_tokens / unit);
    const I count = *gen::inRange<I>(1, 5);
    std::vector<Document> row;
    I used = 0;
    for (I i = 0; i < count; ++i) {
      const I units = *gen::weightedOneOf<I>({{8, gen::just<I>(1)},
                                              {2, gen::just<I>(2)},
                                              {1, gen::just<I>(0)},
                                              {1, gen::inRange<I>(1, most + 1)}});
      if (used + units > most) break;
      used += units;
      const I slots = units * unit;
      const bool caller_pads =
          slots > 0 && *gen::weightedOneOf<bool>({{3, gen::just(false)}, {1, gen::just(true)}});
      const I extra = caller_pads ? *gen::inRange<I>(1, std::min(slots, unit) + 1) : 0;
      row.push_back({slots - extra, extra});
    }
    if (used == 0) row.assign(1, Document{unit, 0});
    return row;
  });
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
    CPLAB_CHECK(cp >= 1 && cp <= 1024,
                "--cp {}: a CP size must be in [1, 1024] (one thread per rank)", cp);
  }
  CPLAB_CHECK(options.max_tokens >= 1, "--max-tokens {}: must be at least 1", options.max_tokens);
  for (const std::string& mask : options.masks) (void)parse_mask_choice(mask);
}

namespace {

// One branch of the C draw: its weight, its values, the class they are in.
struct CpBranch {
  std::size_t weight;
  std::vector<I> values;
  CpClass cls;
};

std::vector<I> range(I lo, I hi, bool primes) {
  std::vector<I> out;
  for (I v = lo; v <= hi; ++v) {
    if ((cp_class_of(v) == CpClass::prime) == primes) out.push_back(v);
  }
  return out;
}

const std::vector<CpBranch>& cp_branches() {
  static const std::vector<CpBranch> branches = {
      {3, {1}, CpClass::one},
      {3, {2}, CpClass::two},
      {8, {3, 5, 7}, CpClass::prime},
      {1, {11, 13, 17, 19, 23, 29, 31}, CpClass::prime},
      {2, {8}, CpClass::eight_plus},
      {2, range(9, 16, false), CpClass::eight_plus},
      {1, range(17, 64, false), CpClass::eight_plus},
      {3, {4, 6}, CpClass::other},
  };
  return branches;
}

}  // namespace

rc::Gen<I> gen_cp(const std::vector<I>& allowed, std::optional<CpClass> cls) {
  if (!allowed.empty()) {
    std::vector<I> of_class;
    for (I cp : allowed) {
      if (!cls || in_cp_class(cp, *cls)) of_class.push_back(cp);
    }
    return gen::elementOf(of_class.empty() ? allowed : of_class);
  }
  std::vector<const CpBranch*> chosen;
  std::size_t total = 0;
  for (const CpBranch& branch : cp_branches()) {
    if (cls && branch.cls != *cls) continue;
    chosen.push_back(&branch);
    total += branch.weight;
  }
  if (chosen.empty()) return gen_cp(allowed);
  // A weighted branch (shrinking toward the first, C = 1), then a value of it.
  return gen::exec([chosen, total] {
    std::size_t ticket = *gen::inRange<std::size_t>(0, total);
    for (const CpBranch* branch : chosen) {
      if (ticket < branch->weight) return *gen::elementOf(branch->values);
      ticket -= branch->weight;
    }
    return *gen::elementOf(chosen.back()->values);
  });
}

rc::Gen<I> gen_bshd_len(const LayoutEntry& entry, const LayoutSpec& spec, I max_tokens,
                        std::optional<BatchKind> kind) {
  if (const I caller = caller_unit(entry, spec); caller > 0) {
    // The padding is the caller's: S a multiple of the unit (one document), never a padded row.
    const I most = std::max<I>(1, max_tokens / caller);
    return gen::map(gen::weightedOneOf<I>({{3, gen::inRange<I>(1, std::min<I>(most, 4) + 1)},
                                           {1, gen::inRange<I>(1, most + 1)}}),
                    [caller](I q) { return q * caller; });
  }
  const I unit = entry.pad_unit(spec);
  if (kind && partitions(entry, spec) && unit > 1) {
    // At a multiple of the unit (the layout pads nothing), or off one (it pads).
    const I most = std::max<I>(1, max_tokens / unit);
    if (*kind == BatchKind::bshd && unit <= max_tokens) {
      return gen::map(gen::weightedOneOf<I>({{3, gen::inRange<I>(1, std::min<I>(most, 4) + 1)},
                                             {1, gen::inRange<I>(1, most + 1)}}),
                      [unit](I q) { return q * unit; });
    }
    if (*kind == BatchKind::bshd_padded) {
      return gen::exec([=] {
        const I q = *gen::inRange<I>(0, std::min<I>(most, 4));
        const I off = *gen::weightedOneOf<I>(
            {{2, gen::just<I>(1)}, {2, gen::just<I>(unit - 1)}, {1, gen::inRange<I>(1, unit)}});
        return std::clamp<I>(q * unit + off, 1, std::max<I>(1, max_tokens));
      });
    }
  }
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
  if (const I unit = caller_unit(entry, spec); unit > 0)
    return gen_caller_padded_row(unit, max_tokens);
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
  if (!partitions(entry, c.spec)) return c.seq_len;
  const I unit = entry.pad_unit(c.spec);
  I len = ceil_to(c.seq_len, unit);
  for (const auto& row : c.docs)
    len = std::max(len, ceil_to(std::max(packed_row_len(entry, c.spec, row), c.seq_len), unit));
  return len;
}

namespace {

// The dtypes of the token tensor under test (one of each class at least).
constexpr DType kCaseDTypes[] = {DType::f32, DType::i64, DType::bf16, DType::f16,
                                 DType::i32, DType::u8,  DType::b8};

rc::Gen<DType> gen_dtype(std::optional<DTypeClass> cls) {
  std::vector<DType> of_class;
  for (DType t : kCaseDTypes) {
    if (!cls || in_dtype_class(t, *cls)) of_class.push_back(t);
  }
  if (of_class.empty()) of_class.assign(std::begin(kCaseDTypes), std::end(kCaseDTypes));
  return gen::elementOf(of_class);
}

}  // namespace

rc::Gen<Case> gen_case(const LayoutEntry& entry, const GenOptions& options) {
  const rc::Gen<Case> constructive = gen::exec([entry, options] {
    const std::optional<CaseCell>& cell = options.cell;
    Case c;
    c.spec.layout = entry.name;
    c.spec.cp = entry.cp_off
                    ? 1
                    : *gen_cp(options.cp, cell ? std::optional<CpClass>(cell->cp) : std::nullopt);
    if (entry.draw_options != nullptr)
      entry.draw_options(c.spec, cell && cell->kind == BatchKind::bshd_padded);
    c.spec.microbatches =
        *gen::weightedOneOf<I>({{6, gen::just<I>(1)}, {3, gen::just<I>(2)}, {1, gen::just<I>(3)}});
    const bool want_packed = cell && cell->kind == BatchKind::packed;
    const bool want_bshd = cell && cell->kind != BatchKind::packed;
    const bool packed = entry.packed_rows && (!entry.bshd_rows || want_packed ||
                                              (!want_bshd && *gen::arbitrary<bool>()));
    if (packed) {
      c.rows = c.spec.microbatches;
      I longest = 0;
      for (I b = 0; b < c.rows; ++b) {
        c.docs.push_back(*gen_packed_row(entry, c.spec, options.max_tokens));
        longest = std::max(longest, occupancy(c.docs.back()));
      }
      const I caller = caller_unit(entry, c.spec);
      const I row_padding =
          caller > 0 ? 0
                     : *gen::weightedOneOf<I>({{3, gen::just<I>(0)}, {1, gen::inRange<I>(1, 6)}});
      c.seq_len = std::max<I>(1, longest + row_padding);
      // Onto the nearest length the layout takes (one that pads nothing: a multiple of its unit).
      c.seq_len = sim::nearest_accepted_len(c.spec, c.seq_len);
      // The caller pads every row to the longest: the rest goes to its last document.
      if (caller > 0) {
        for (auto& row : c.docs) row.back().extra += c.seq_len - occupancy(row);
      }
    } else {
      // Two rows or more per microbatch often: rows differ in every key (positions too).
      c.rows = c.spec.microbatches *
               *gen::weightedOneOf<I>({{2, gen::just<I>(1)}, {1, gen::just<I>(2)}});
      c.seq_len = *gen_bshd_len(entry, c.spec, options.max_tokens,
                                want_bshd ? std::optional<BatchKind>(cell->kind) : std::nullopt);
      c.seq_len = sim::nearest_accepted_len(c.spec, c.seq_len);
      c.row_positions = *gen::weightedOneOf<RowPositions>({{2, gen::just(RowPositions::arange)},
                                                           {1, gen::just(RowPositions::offset)},
                                                           {1, gen::just(RowPositions::restart)}});
      c.left_pad = *gen::weightedOneOf<I>(
          {{3, gen::just<I>(0)}, {1, gen::inRange<I>(1, std::min<I>(c.seq_len, 6) + 1)}});
    }
    if (entry.draw_case_options != nullptr) entry.draw_case_options(c);
    resolve_case_options(c);
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
    c.dtype = *gen_dtype(cell ? std::optional<DTypeClass>(cell->dtype) : std::nullopt);
    c.positions = packed ? *gen::weightedOneOf<PositionKind>({{3, gen::just(PositionKind::none)},
                                                              {1, gen::just(PositionKind::per_row)},
                                                              {1, gen::just(PositionKind::mrope)}})
                         : *gen::weightedOneOf<PositionKind>({{2, gen::just(PositionKind::none)},
                                                              {2, gen::just(PositionKind::per_row)},
                                                              {1, gen::just(PositionKind::shared)},
                                                              {1, gen::just(PositionKind::mrope)}});
    c.key_dtypes = *gen::weightedOneOf<KeyDTypes>(
        {{3, gen::just(KeyDTypes::wide)}, {1, gen::just(KeyDTypes::narrow)}});
    c.loss_mask = *gen::arbitrary<bool>();
    c.padding_mask = *gen::arbitrary<bool>();
    c.extra_key = *gen::arbitrary<bool>();
    c.extra_planes = *gen::weightedOneOf<bool>({{3, gen::just(false)}, {1, gen::just(true)}});
    c.extra_features = *gen::weightedOneOf<bool>({{3, gen::just(false)}, {1, gen::just(true)}});
    c.seed = *gen::inRange<std::uint64_t>(0, 1ull << 32);
    if (!options.masks.empty())
      c.mask = mask_choice_text(parse_mask_choice(*gen::elementOf(options.masks)));
    return c;
  });
  return gen::shrink(constructive, [allowed = options.cp](const Case& c) {
    return rc::seq::fromContainer(domain_shrinks(c, allowed));
  });
}

namespace {

// Lengths below n worth trying, nearest first: one token less, the multiple of the unit below
// (and one past it, where boundary bugs live), half.
std::vector<I> shorter_lengths(I n, I unit) {
  std::vector<I> out;
  const auto add = [&](I len) {
    if (len >= 0 && len < n && std::find(out.begin(), out.end(), len) == out.end())
      out.push_back(len);
  };
  add(n - 1);
  if (unit > 1) {
    const I below = (n - 1) / unit * unit;  // the largest multiple under n
    add(below + 1);
    add(below);
  }
  add(n / 2);
  return out;
}

I occupancy_of(const std::vector<std::vector<Document>>& docs) {
  I longest = 1;
  for (const auto& row : docs) longest = std::max(longest, occupancy(row));
  return longest;
}

}  // namespace

std::vector<Case> domain_shrinks(const Case& c, const std::vector<I>& allowed_cp) {
  std::vector<Case> out;
  const LayoutEntry& entry = layout_entry(c.spec.layout);
  const auto add = [&](Case smaller) {
    resolve_case_options(smaller);
    // A layout that takes only some lengths: S moves onto the nearest it takes at or above, else
    // the nearest below (never longer than c's, so that shrinking cannot go round in a circle).
    if (rule_of(entry) == sim::RowRule::Of::padded_length) {
      const auto fit = [&](I n) { return sim::nearest_accepted_len(smaller.spec, n); };
      I len = fit(smaller.seq_len);
      if (len > c.seq_len) {
        len = std::min(smaller.seq_len, c.seq_len);
        while (len >= 1 && fit(len) != len) --len;
        if (len < 1 || (smaller.packed() && len < occupancy_of(smaller.docs))) return;
      }
      smaller.seq_len = len;
      smaller.left_pad = std::min(smaller.left_pad, len);
    }
    if (!(smaller == c)) out.push_back(std::move(smaller));
  };
  const I unit = partitions(entry, c.spec) ? entry.pad_unit(c.spec) : 1;
  // Fewer microbatches: drop one (any of them for packed rows, whose rows differ; the last for
  // BSHD, whose microbatches are cut from one drawn batch).
  if (c.spec.microbatches > 1) {
    const std::size_t choices = c.packed() ? c.docs.size() : 1;
    for (std::size_t drop = 0; drop < choices; ++drop) {
      Case s = c;
      s.spec.microbatches -= 1;
      s.rows -= c.rows_per_microbatch();
      if (s.packed()) s.docs.erase(s.docs.end() - 1 - static_cast<std::ptrdiff_t>(drop));
      add(s);
    }
  }
  if (!c.packed() && c.rows > c.spec.microbatches) {
    for (I per : {I{1}, c.rows_per_microbatch() - 1}) {
      Case s = c;
      s.rows = c.spec.microbatches * std::max<I>(1, per);
      add(s);
    }
  }
  // Fewer documents: each one removed (the row keeps its length S).
  for (std::size_t b = 0; b < c.docs.size(); ++b) {
    for (std::size_t i = 0; i < c.docs[b].size() && c.docs[b].size() > 1; ++i) {
      Case s = c;
      s.docs[b].erase(s.docs[b].begin() + static_cast<std::ptrdiff_t>(i));
      add(s);
    }
  }
  // Shorter documents, one at a time: the layout's unit is per document where it pads each one,
  // else per row.
  const I doc_unit = entry.local_documents ? unit : 1;
  for (std::size_t b = 0; b < c.docs.size(); ++b) {
    for (std::size_t i = 0; i < c.docs[b].size(); ++i) {
      for (I len : shorter_lengths(c.docs[b][i].real, doc_unit)) {
        Case s = c;
        s.docs[b][i].real = len;
        add(s);
      }
      if (c.docs[b][i].extra > 0) {
        for (I extra : {I{0}, c.docs[b][i].extra - 1}) {
          Case s = c;
          s.docs[b][i].extra = extra;
          add(s);
        }
      }
    }
  }
  // Shorter rows: BSHD toward the unit's multiples; packed row padding after the documents.
  if (!c.packed()) {
    for (I len : shorter_lengths(c.seq_len, unit)) {
      if (len < 1) continue;
      Case s = c;
      s.seq_len = len;
      s.left_pad = std::min(s.left_pad, len);
      add(s);
    }
  } else if (c.seq_len > occupancy_of(c.docs)) {
    for (I len : {occupancy_of(c.docs), c.seq_len - 1}) {
      Case s = c;
      s.seq_len = len;
      add(s);
    }
  }
  // Simpler data, then simpler keys, one at a time (so that a shrunk case names what it needs).
  Case simple = c;
  simple.ignore_permille = simple.invalid_permille = simple.pad_content_permille = 0;
  add(simple);
  simple = c;
  simple.loss_mask = simple.padding_mask = simple.extra_key = false;
  simple.extra_planes = simple.extra_features = false;
  simple.positions = PositionKind::none;
  simple.row_positions = RowPositions::arange;
  simple.left_pad = 0;
  simple.key_dtypes = KeyDTypes::wide;
  simple.primary = Primary::ids;
  simple.dim = 1;
  add(simple);
  for (bool Case::*key : {&Case::loss_mask, &Case::padding_mask, &Case::extra_key,
                          &Case::extra_planes, &Case::extra_features}) {
    if (!(c.*key)) continue;
    Case s = c;
    s.*key = false;
    add(s);
  }
  if (c.left_pad > 0) {
    Case s = c;
    s.left_pad = c.left_pad == 1 ? 0 : 1;
    add(s);
  }
  if (c.row_positions != RowPositions::arange) {
    Case s = c;
    s.row_positions = RowPositions::arange;
    add(s);
  }
  if (c.key_dtypes != KeyDTypes::wide) {
    Case s = c;
    s.key_dtypes = KeyDTypes::wide;
    add(s);
  }
  if (c.dim > 1) {
    Case s = c;
    s.dim = 1;
    add(s);
  }
  if (c.primary != Primary::ids) {
    Case s = c;
    s.primary = Primary::ids;
    add(s);
  }
  if (!c.spec.shard_primary || c.spec.pad_policy != PadPolicy::spec) {
    Case s = c;
    s.spec.shard_primary = true;
    s.spec.pad_policy = PadPolicy::spec;
    add(s);
  }
  if (entry.shrink_options != nullptr) {
    for (const LayoutSpec& simpler : entry.shrink_options(c.spec)) {
      Case s = c;
      s.spec = simpler;
      add(s);
    }
  }
  // Layout options back to their defaults: a derived K fixed at its value, no padding at C = 1.
  for (const std::string& name : c.automatic) {  // an automatic value fixed at its value
    Case s = c;
    std::erase(s.automatic, name);
    add(s);
  }
  for (const layouts::LayoutOption* o : layouts::options_of(c.spec.layout)) {
    if (!o->is_switch || o->of(c.spec) == o->fallback) continue;  // a switch back off
    Case s = c;
    o->reset(s.spec);
    add(s);
  }
  // Where the padding is the caller's, whole units: a document (and its slots) out of a one-row
  // case, a document a unit shorter (its own padding first), a document's padding made real.
  if (const I caller = caller_unit(entry, c.spec);
      caller > 0 && c.spec.cp > 1 && c.docs.size() == 1) {
    const std::vector<Document>& row = c.docs.front();
    for (std::size_t i = 0; i < row.size(); ++i) {
      const I slots = row[i].real + row[i].extra;
      if (row.size() > 1 && slots < c.seq_len) {
        Case s = c;
        s.docs.front().erase(s.docs.front().begin() + static_cast<std::ptrdiff_t>(i));
        s.seq_len -= slots;
        add(s);
      }
      if (slots >= caller && c.seq_len > caller) {
        Case s = c;
        Document& d = s.docs.front()[i];
        const I from_extra = std::min(d.extra, caller);
        d.extra -= from_extra;
        d.real -= caller - from_extra;
        s.seq_len -= caller;
        add(s);
      }
      if (row[i].extra > 0) {
        Case s = c;
        s.docs.front()[i] = {slots, 0};
        add(s);
      }
    }
  }
  // Smaller C last, smallest first: the first that still fails is the smallest that does (a C
  // below it passes, or it would have been taken).
  const auto allowed = [&](I cp) {
    return allowed_cp.empty() ||
           std::find(allowed_cp.begin(), allowed_cp.end(), cp) != allowed_cp.end();
  };
  for (I cp = 1; cp < c.spec.cp; ++cp) {
    if (!allowed(cp)) continue;
    Case s = c;
    s.spec.cp = cp;
    if (entry.options_at_cp == nullptr) {
      add(s);
      continue;
    }
    for (const LayoutSpec& fitted : entry.options_at_cp(c.spec, cp)) {
      s.spec = fitted;
      s.spec.cp = cp;
      add(s);
    }
  }
  // A layout whose padding is the caller's refuses the rest: keep only the rows it takes.
  std::erase_if(out, [&](const Case& s) { return !caller_padded(entry, s); });
  if (rule_of(entry) == sim::RowRule::Of::length) {
    // Rows it takes only: S a multiple of the unit (C > 1). A packed row shrinks to the multiple
    // that still holds its documents.
    if (c.packed() && partitions(entry, c.spec)) {
      const I fits = sim::nearest_accepted_len(c.spec, occupancy_of(c.docs));
      if (fits < c.seq_len) {
        Case s = c;
        s.seq_len = fits;
        out.insert(out.begin(), s);
      }
    }
    // A smaller C that does not divide S cuts the row to the multiple below it when that still
    // holds the documents; any other shrink that leaves S off a multiple is not a case of this
    // layout. A packed shrink that frees slots is also tried with the row cut to the multiple that
    // still holds its documents (the row cannot lose one slot at a time).
    std::vector<Case> valid;
    for (Case& s : out) {
      const I need = partitions(entry, s.spec) ? entry.descriptor->row_rule.multiple(s.spec) : 1;
      if (s.packed() && ceil_to(occupancy_of(s.docs), need) < s.seq_len) {
        Case tight = s;
        tight.seq_len = ceil_to(occupancy_of(s.docs), need);
        valid.push_back(std::move(tight));
      }
      if (s.seq_len % need == 0) {
        valid.push_back(std::move(s));
      } else if (s.spec.cp < c.spec.cp && s.packed() &&
                 s.seq_len / need * need >= occupancy_of(s.docs)) {
        s.seq_len = s.seq_len / need * need;
        valid.push_back(std::move(s));
      }
    }
    out = std::move(valid);
  }
  return out;
}

void showValue(const Case& c, std::ostream& os) { os << print_case(c); }

}  // namespace cplab::properties
