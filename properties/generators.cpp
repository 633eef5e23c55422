#include "properties/generators.hpp"

#include <algorithm>
#include <ostream>

#include "layouts/index_math.hpp"
#include "layouts/row_acceptance.hpp"
#include "properties/case_rows.hpp"
#include "properties/mask_choice.hpp"

namespace cplab::properties {

namespace gen = rc::gen;
using I = std::int64_t;
using index_math::ceil_to;

namespace {

// One of a few values (shrinks toward the first).
template <typename T>
rc::Gen<T> pick(std::initializer_list<T> values) {
  return gen::elementOf(std::vector<T>(values));
}

// Slots a packed row needs under the layout: one that re-lays documents pads each to its
// document unit (SPEC §3).
I packed_row_len(const LayoutEntry& entry, const LayoutSpec& spec,
                 const std::vector<Document>& row) {
  if (entry.descriptor->padding.document_unit == nullptr || !partitions(entry, spec))
    return occupancy(row);
  const I unit = entry.descriptor->padding.document_unit(spec);
  I len = 0;
  for (const Document& d : row) len += ceil_to(d.real, unit);
  return len;
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
  const I unit = entry.descriptor->padding.unit(spec);
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
  const I unit = entry.descriptor->padding.unit(c.spec);
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

namespace {

// A packed case's rows, one per microbatch, and S: the longest row, now and then padded further,
// on the nearest length the layout takes. Draws inside gen::exec.
void draw_packed_rows(const LayoutEntry& entry, const GenOptions& options, Case& c) {
  c.rows = c.spec.microbatches;
  I longest = 0;
  for (I b = 0; b < c.rows; ++b) {
    c.docs.push_back(*gen_packed_row(entry, c.spec, options.max_tokens));
    longest = std::max(longest, occupancy(c.docs.back()));
  }
  const I caller = caller_unit(entry, c.spec);
  const I row_padding =
      caller > 0 ? 0 : *gen::weightedOneOf<I>({{3, gen::just<I>(0)}, {1, gen::inRange<I>(1, 6)}});
  c.seq_len = std::max<I>(1, longest + row_padding);
  // Onto the nearest length the layout takes (one that pads nothing: a multiple of its unit).
  c.seq_len = sim::nearest_accepted_len(c.spec, c.seq_len);
  // The caller pads every row to the longest: the rest goes to its last document.
  if (caller > 0) {
    for (auto& row : c.docs) row.back().extra += c.seq_len - occupancy(row);
  }
}

// A BSHD case's rows, S, positions and left padding. Draws inside gen::exec.
void draw_bshd_rows(const LayoutEntry& entry, const GenOptions& options, bool want_bshd, Case& c) {
  // Two rows or more per microbatch often: rows differ in every key (positions too).
  c.rows =
      c.spec.microbatches * *gen::weightedOneOf<I>({{2, gen::just<I>(1)}, {1, gen::just<I>(2)}});
  c.seq_len =
      *gen_bshd_len(entry, c.spec, options.max_tokens,
                    want_bshd ? std::optional<BatchKind>(options.cell->kind) : std::nullopt);
  c.seq_len = sim::nearest_accepted_len(c.spec, c.seq_len);
  c.row_positions = *gen::weightedOneOf<RowPositions>({{2, gen::just(RowPositions::arange)},
                                                       {1, gen::just(RowPositions::offset)},
                                                       {1, gen::just(RowPositions::restart)}});
  c.left_pad = *gen::weightedOneOf<I>(
      {{3, gen::just<I>(0)}, {1, gen::inRange<I>(1, std::min<I>(c.seq_len, 6) + 1)}});
}

// Everything of a case past its rows: the vocabulary the logits budget leaves, the data, the
// keys and their dtypes, the seed and the mask. Draws inside gen::exec.
void draw_data_and_keys(const LayoutEntry& entry, const GenOptions& options, bool packed, Case& c) {
  const std::optional<CaseCell>& cell = options.cell;
  const I budget_vocab =
      options.logits_budget / std::max<I>(1, c.rows * estimated_padded_len(entry, c));
  const I vocab_cap = std::clamp<I>(budget_vocab, 2, 4096);
  c.vocab = *gen::weightedOneOf<I>({{3, gen::inRange<I>(2, std::min<I>(17, vocab_cap + 1))},
                                    {2, gen::inRange<I>(2, vocab_cap + 1)}});
  c.spec.pad_token_id = *gen::inRange<I>(0, c.vocab);
  c.pad_content_permille = *gen::weightedOneOf<int>({{2, gen::just(0)}, {1, gen::inRange(1, 400)}});
  c.ignore_permille = *gen_permille(1);
  c.invalid_permille = *gen_permille(1);
  c.spec.pad_policy = *gen::weightedOneOf<PadPolicy>(
      {{3, gen::just(PadPolicy::spec)}, {1, gen::just(PadPolicy::zero)}});
  c.spec.shard_primary = *gen::weightedOneOf<bool>({{3, gen::just(true)}, {1, gen::just(false)}});
  c.primary =
      *gen::weightedOneOf<Primary>({{3, gen::just(Primary::ids)}, {1, gen::just(Primary::embeds)}});
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
}

}  // namespace

rc::Gen<Case> gen_case(const LayoutEntry& entry, const GenOptions& options) {
  const rc::Gen<Case> constructive = gen::exec([entry, options] {
    const std::optional<CaseCell>& cell = options.cell;
    Case c;
    c.spec.layout = entry.name;
    c.spec.cp = entry.descriptor->cp_off
                    ? 1
                    : *gen_cp(options.cp, cell ? std::optional<CpClass>(cell->cp) : std::nullopt);
    if (entry.draw_options != nullptr)
      entry.draw_options(c.spec, cell && cell->kind == BatchKind::bshd_padded);
    c.spec.microbatches =
        *gen::weightedOneOf<I>({{6, gen::just<I>(1)}, {3, gen::just<I>(2)}, {1, gen::just<I>(3)}});
    const bool want_packed = cell && cell->kind == BatchKind::packed;
    const bool want_bshd = cell && cell->kind != BatchKind::packed;
    const bool packed =
        (!entry.descriptor->bshd_rows || want_packed || (!want_bshd && *gen::arbitrary<bool>()));
    if (packed) {
      draw_packed_rows(entry, options, c);
    } else {
      draw_bshd_rows(entry, options, want_bshd, c);
    }
    if (entry.draw_case_options != nullptr) entry.draw_case_options(c);
    resolve_case_options(c);
    draw_data_and_keys(entry, options, packed, c);
    return c;
  });
  return gen::shrink(constructive, [allowed = options.cp](const Case& c) {
    return rc::seq::fromContainer(domain_shrinks(c, allowed));
  });
}

void showValue(const Case& c, std::ostream& os) { os << print_case(c); }

}  // namespace cplab::properties
