// The domain shrinks of a case (generators.hpp's domain_shrinks): one function per way a case gets
// smaller, listed in kShrinks in the order RapidCheck tries them, then the rows the layout takes.
#include <algorithm>
#include <string_view>

#include "core/layout_option.hpp"
#include "layouts/index_math.hpp"
#include "layouts/row_acceptance.hpp"
#include "properties/case_rows.hpp"
#include "properties/generators.hpp"

namespace cplab::properties {

namespace {

using I = std::int64_t;
using index_math::ceil_to;

sim::RowRule::Of rule_of(const LayoutEntry& entry) { return entry.descriptor->row_rule.of; }

I occupancy_of(const std::vector<std::vector<Document>>& docs) {
  I longest = 1;
  for (const auto& row : docs) longest = std::max(longest, occupancy(row));
  return longest;
}

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

// One case being shrunk: what every shrink reads, and the smaller cases found so far.
struct ShrinkRun {
  const Case& c;
  const LayoutEntry& entry;
  I unit;  // the layout's pad unit where it partitions the case's rows, else 1
  const std::vector<I>& allowed_cp;
  std::vector<Case> out;

  // Keeps a smaller case unless it is c itself.
  void add(Case smaller) {
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
  }
};

// Drop one microbatch (any of them for packed rows, whose rows differ; the last for BSHD, whose
// microbatches are cut from one drawn batch).
void fewer_microbatches(ShrinkRun& run) {
  const Case& c = run.c;
  if (c.spec.microbatches <= 1) return;
  const std::size_t choices = c.packed() ? c.docs.size() : 1;
  for (std::size_t drop = 0; drop < choices; ++drop) {
    Case s = c;
    s.spec.microbatches -= 1;
    s.rows -= c.rows_per_microbatch();
    if (s.packed()) s.docs.erase(s.docs.end() - 1 - static_cast<std::ptrdiff_t>(drop));
    run.add(s);
  }
}

void fewer_rows_per_microbatch(ShrinkRun& run) {
  const Case& c = run.c;
  if (c.packed() || c.rows <= c.spec.microbatches) return;
  for (I per : {I{1}, c.rows_per_microbatch() - 1}) {
    Case s = c;
    s.rows = c.spec.microbatches * std::max<I>(1, per);
    run.add(s);
  }
}

// Each document removed (the row keeps its length S).
void fewer_documents(ShrinkRun& run) {
  const Case& c = run.c;
  for (std::size_t b = 0; b < c.docs.size(); ++b) {
    for (std::size_t i = 0; i < c.docs[b].size() && c.docs[b].size() > 1; ++i) {
      Case s = c;
      s.docs[b].erase(s.docs[b].begin() + static_cast<std::ptrdiff_t>(i));
      run.add(s);
    }
  }
}

// One document at a time: the layout's unit is per document where it pads each one, else per row.
void shorter_documents(ShrinkRun& run) {
  const Case& c = run.c;
  const I doc_unit = run.entry.descriptor->local_documents ? run.unit : 1;
  for (std::size_t b = 0; b < c.docs.size(); ++b) {
    for (std::size_t i = 0; i < c.docs[b].size(); ++i) {
      for (I len : shorter_lengths(c.docs[b][i].real, doc_unit)) {
        Case s = c;
        s.docs[b][i].real = len;
        run.add(s);
      }
      if (c.docs[b][i].extra > 0) {
        for (I extra : {I{0}, c.docs[b][i].extra - 1}) {
          Case s = c;
          s.docs[b][i].extra = extra;
          run.add(s);
        }
      }
    }
  }
}

// BSHD toward the unit's multiples; packed row padding after the documents.
void shorter_rows(ShrinkRun& run) {
  const Case& c = run.c;
  if (!c.packed()) {
    for (I len : shorter_lengths(c.seq_len, run.unit)) {
      if (len < 1) continue;
      Case s = c;
      s.seq_len = len;
      s.left_pad = std::min(s.left_pad, len);
      run.add(s);
    }
  } else if (c.seq_len > occupancy_of(c.docs)) {
    for (I len : {occupancy_of(c.docs), c.seq_len - 1}) {
      Case s = c;
      s.seq_len = len;
      run.add(s);
    }
  }
}

// Simpler data, then simpler keys, all at once and then one at a time (so that a shrunk case
// names what it needs).
void simpler_data(ShrinkRun& run) {
  Case simple = run.c;
  simple.ignore_permille = simple.invalid_permille = simple.pad_content_permille = 0;
  run.add(simple);
}

void simpler_keys(ShrinkRun& run) {
  Case simple = run.c;
  simple.loss_mask = simple.padding_mask = simple.extra_key = false;
  simple.extra_planes = simple.extra_features = false;
  simple.positions = PositionKind::none;
  simple.row_positions = RowPositions::arange;
  simple.left_pad = 0;
  simple.key_dtypes = KeyDTypes::wide;
  simple.primary = Primary::ids;
  simple.dim = 1;
  run.add(simple);
}

void each_key_off(ShrinkRun& run) {
  for (bool Case::*key : {&Case::loss_mask, &Case::padding_mask, &Case::extra_key,
                          &Case::extra_planes, &Case::extra_features}) {
    if (!(run.c.*key)) continue;
    Case s = run.c;
    s.*key = false;
    run.add(s);
  }
}

void each_key_simpler(ShrinkRun& run) {
  const Case& c = run.c;
  if (c.left_pad > 0) {
    Case s = c;
    s.left_pad = c.left_pad == 1 ? 0 : 1;
    run.add(s);
  }
  if (c.row_positions != RowPositions::arange) {
    Case s = c;
    s.row_positions = RowPositions::arange;
    run.add(s);
  }
  if (c.key_dtypes != KeyDTypes::wide) {
    Case s = c;
    s.key_dtypes = KeyDTypes::wide;
    run.add(s);
  }
  if (c.dim > 1) {
    Case s = c;
    s.dim = 1;
    run.add(s);
  }
  if (c.primary != Primary::ids) {
    Case s = c;
    s.primary = Primary::ids;
    run.add(s);
  }
}

void default_pad_policy(ShrinkRun& run) {
  const Case& c = run.c;
  if (c.spec.shard_primary && c.spec.pad_policy == PadPolicy::spec) return;
  Case s = c;
  s.spec.shard_primary = true;
  s.spec.pad_policy = PadPolicy::spec;
  run.add(s);
}

void layout_simpler_options(ShrinkRun& run) {
  if (run.entry.shrink_options == nullptr) return;
  for (const LayoutSpec& simpler : run.entry.shrink_options(run.c.spec)) {
    Case s = run.c;
    s.spec = simpler;
    run.add(s);
  }
}

// Layout options back to their defaults: a derived K fixed at its value, no padding at C = 1.
void options_to_defaults(ShrinkRun& run) {
  const Case& c = run.c;
  for (const std::string& name : c.automatic) {  // an automatic value fixed at its value
    Case s = c;
    std::erase(s.automatic, name);
    run.add(s);
  }
  for (const layouts::LayoutOption* o : layouts::options_of(c.spec.layout)) {
    if (!o->is_switch || o->of(c.spec) == o->fallback) continue;  // a switch back off
    Case s = c;
    o->reset(s.spec);
    run.add(s);
  }
}

// Where the padding is the caller's, whole units: a document (and its slots) out of a one-row
// case, a document a unit shorter (its own padding first), a document's padding made real.
void caller_whole_units(ShrinkRun& run) {
  const Case& c = run.c;
  const I caller = caller_unit(run.entry, c.spec);
  if (caller <= 0 || c.spec.cp <= 1 || c.docs.size() != 1) return;
  const std::vector<Document>& row = c.docs.front();
  for (std::size_t i = 0; i < row.size(); ++i) {
    const I slots = row[i].real + row[i].extra;
    if (row.size() > 1 && slots < c.seq_len) {
      Case s = c;
      s.docs.front().erase(s.docs.front().begin() + static_cast<std::ptrdiff_t>(i));
      s.seq_len -= slots;
      run.add(s);
    }
    if (slots >= caller && c.seq_len > caller) {
      Case s = c;
      Document& d = s.docs.front()[i];
      const I from_extra = std::min(d.extra, caller);
      d.extra -= from_extra;
      d.real -= caller - from_extra;
      s.seq_len -= caller;
      run.add(s);
    }
    if (row[i].extra > 0) {
      Case s = c;
      s.docs.front()[i] = {slots, 0};
      run.add(s);
    }
  }
}

// Smaller C last, smallest first: the first that still fails is the smallest that does (a C
// below it passes, or it would have been taken).
void smaller_cp(ShrinkRun& run) {
  const Case& c = run.c;
  const auto allowed = [&](I cp) {
    return run.allowed_cp.empty() ||
           std::find(run.allowed_cp.begin(), run.allowed_cp.end(), cp) != run.allowed_cp.end();
  };
  for (I cp = 1; cp < c.spec.cp; ++cp) {
    if (!allowed(cp)) continue;
    Case s = c;
    s.spec.cp = cp;
    if (run.entry.options_at_cp == nullptr) {
      run.add(s);
      continue;
    }
    for (const LayoutSpec& fitted : run.entry.options_at_cp(c.spec, cp)) {
      s.spec = fitted;
      s.spec.cp = cp;
      run.add(s);
    }
  }
}

// One way a case gets smaller, by name (the name says what it tries; nothing reads it).
struct Shrink {
  std::string_view name;
  void (*add_smaller)(ShrinkRun&);
};

// RapidCheck tries the shrinks in this order and takes the first that still fails: reordering them
// changes every shrunk counterexample.
constexpr Shrink kShrinks[] = {
    {.name = "fewer microbatches", .add_smaller = fewer_microbatches},
    {.name = "fewer rows per microbatch", .add_smaller = fewer_rows_per_microbatch},
    {.name = "fewer documents", .add_smaller = fewer_documents},
    {.name = "shorter documents", .add_smaller = shorter_documents},
    {.name = "shorter rows", .add_smaller = shorter_rows},
    {.name = "simpler data", .add_smaller = simpler_data},
    {.name = "simpler keys", .add_smaller = simpler_keys},
    {.name = "each key off", .add_smaller = each_key_off},
    {.name = "each key simpler", .add_smaller = each_key_simpler},
    {.name = "default pad policy", .add_smaller = default_pad_policy},
    {.name = "the layout's simpler options", .add_smaller = layout_simpler_options},
    {.name = "options to their defaults", .add_smaller = options_to_defaults},
    {.name = "the caller's whole units", .add_smaller = caller_whole_units},
    {.name = "smaller C", .add_smaller = smaller_cp},
};

// A layout whose rule is a multiple of S takes only rows of that multiple (C > 1). A packed row
// shrinks to the multiple that still holds its documents.
std::vector<Case> onto_length_multiples(const ShrinkRun& run, std::vector<Case> out) {
  const Case& c = run.c;
  const LayoutEntry& entry = run.entry;
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
  return valid;
}

}  // namespace

std::vector<Case> domain_shrinks(const Case& c, const std::vector<I>& allowed_cp) {
  const LayoutEntry& entry = layout_entry(c.spec.layout);
  ShrinkRun run{.c = c,
                .entry = entry,
                .unit = partitions(entry, c.spec) ? entry.descriptor->padding.unit(c.spec) : 1,
                .allowed_cp = allowed_cp,
                .out = {}};
  for (const Shrink& shrink : kShrinks) shrink.add_smaller(run);
  // A layout whose padding is the caller's refuses the rest: keep only the rows it takes.
  std::erase_if(run.out, [&](const Case& s) { return !caller_padded(entry, s); });
  if (rule_of(entry) == sim::RowRule::Of::length)
    return onto_length_multiples(run, std::move(run.out));
  return std::move(run.out);
}

}  // namespace cplab::properties
