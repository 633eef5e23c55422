#include "properties/coverage.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace cplab::properties {

namespace {

bool is_prime(std::int64_t n) {
  if (n < 2) return false;
  for (std::int64_t d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

std::int64_t ceil_to(std::int64_t x, std::int64_t m) { return x + ((m - x % m) % m); }

// The C classes a layout can draw from `allowed` (empty: all), declared ones first.
std::vector<CpClass> drawable_cp_classes(const LayoutEntry& entry,
                                         const std::vector<std::int64_t>& allowed) {
  if (entry.descriptor->cp_off) return {CpClass::one};
  std::vector<CpClass> out;
  for (CpClass cls : kDeclaredCpClasses) {
    if (allowed.empty() || std::any_of(allowed.begin(), allowed.end(),
                                       [&](std::int64_t cp) { return in_cp_class(cp, cls); })) {
      out.push_back(cls);
    }
  }
  return out;
}

// Whether the layout pads a row it is given (its row rule leaves the padding to it), rather than
// leaving the padding to the caller: its documents' (per-document rule) or its row's (a length it
// pads nothing of).
bool pads_rows(const LayoutEntry& entry) {
  using Of = sim::RowRule::Of;
  const Of of = entry.descriptor->row_rule.of;
  return of == Of::anything || of == Of::padded_length;
}

std::vector<BatchKind> layout_kinds(const LayoutEntry& entry) {
  std::vector<BatchKind> kinds;
  if (entry.descriptor->bshd_rows) kinds.push_back(BatchKind::bshd);
  // A layout whose padding is the caller's never pads a row: it refuses one it would have to; a
  // layout that pads nothing takes no row it would pad.
  if (entry.descriptor->bshd_rows && !entry.descriptor->cp_off && pads_rows(entry))
    kinds.push_back(BatchKind::bshd_padded);
  kinds.push_back(BatchKind::packed);  // every layout takes packed rows
  return kinds;
}

bool rule_takes(const CoverageRule& rule, BatchKind kind) {
  return rule.kinds.empty() ||
         std::find(rule.kinds.begin(), rule.kinds.end(), kind) != rule.kinds.end();
}

// Only the padded kinds and some options need C > 1: the identity there pads nothing.
bool needs_cp_above_one(const CoverageRule& rule, BatchKind kind) {
  return rule.needs_cp_above_one || kind == BatchKind::bshd_padded;
}

}  // namespace

std::string_view batch_kind_name(BatchKind k) {
  constexpr std::string_view names[] = {"bshd", "bshd+pad", "packed"};
  return names[static_cast<int>(k)];
}
std::string_view dtype_class_name(DTypeClass d) {
  constexpr std::string_view names[] = {"float", "int", "byte"};
  return names[static_cast<int>(d)];
}
std::string_view cp_class_name(CpClass c) {
  constexpr std::string_view names[] = {"C=1", "C=2", "C=prime", "C>=8", "C=4|6"};
  return names[static_cast<int>(c)];
}

CpClass cp_class_of(std::int64_t cp) {
  if (cp == 1) return CpClass::one;
  if (cp == 2) return CpClass::two;
  if (is_prime(cp)) return CpClass::prime;
  if (cp >= 8) return CpClass::eight_plus;
  return CpClass::other;
}

bool in_cp_class(std::int64_t cp, CpClass cls) { return cp >= 1 && cp_class_of(cp) == cls; }

DTypeClass dtype_class_of(DType dtype) {
  switch (dtype) {
    case DType::f32:
    case DType::bf16:
    case DType::f16:
      return DTypeClass::floating;
    case DType::i64:
    case DType::i32:
      return DTypeClass::integer;
    case DType::u8:
    case DType::b8:
      return DTypeClass::byte;
  }
  return DTypeClass::floating;
}

bool in_dtype_class(DType dtype, DTypeClass cls) { return dtype_class_of(dtype) == cls; }

BatchKind batch_kind_of(const LayoutEntry& entry, const Case& c) {
  if (c.packed()) return BatchKind::packed;
  if (c.spec.cp == 1) return BatchKind::bshd;
  return ceil_to(c.seq_len, entry.descriptor->padding.unit(c.spec)) == c.seq_len
             ? BatchKind::bshd
             : BatchKind::bshd_padded;
}

std::string cell_name(const CaseCell& cell) {
  return fmt::format("{} · {} · {}", batch_kind_name(cell.kind), dtype_class_name(cell.dtype),
                     cp_class_name(cell.cp));
}

std::vector<CaseCell> drawable_cells(const LayoutEntry& entry,
                                     const std::vector<std::int64_t>& allowed_cp) {
  std::vector<CaseCell> cells;
  for (BatchKind kind : layout_kinds(entry)) {
    for (DTypeClass dtype : kDTypeClasses) {
      for (CpClass cp : drawable_cp_classes(entry, allowed_cp)) {
        if (kind == BatchKind::bshd_padded && cp == CpClass::one) continue;
        cells.push_back({kind, dtype, cp});
      }
    }
  }
  return cells;
}

std::vector<CaseCell> cells_for_cp(const LayoutEntry& entry,
                                   const std::vector<std::int64_t>& allowed_cp) {
  std::vector<CaseCell> cells = drawable_cells(entry, allowed_cp);
  const bool other = std::any_of(allowed_cp.begin(), allowed_cp.end(),
                                 [](std::int64_t cp) { return in_cp_class(cp, CpClass::other); });
  if (entry.descriptor->cp_off || !other) return cells;
  for (BatchKind kind : layout_kinds(entry)) {
    for (DTypeClass dtype : kDTypeClasses) cells.push_back({kind, dtype, CpClass::other});
  }
  return cells;
}

std::string combination_name(const CoverageRule& rule, BatchKind kind, DTypeClass dtype,
                             CpClass cp) {
  std::vector<std::string_view> parts;
  if (rule.option != kAnyCase) parts.push_back(rule.option);
  parts.push_back(batch_kind_name(kind));
  if (rule.by_dtype) parts.push_back(dtype_class_name(dtype));
  if (rule.by_cp) parts.push_back(cp_class_name(cp));
  return fmt::format("{}", fmt::join(parts, " · "));
}

std::map<std::string, std::int64_t> declared_combinations(
    const std::vector<CoverageRule>& rules, const LayoutEntry& entry,
    const std::vector<std::int64_t>& allowed_cp) {
  std::map<std::string, std::int64_t> declared;
  const std::vector<CpClass> classes = drawable_cp_classes(entry, allowed_cp);
  for (const CoverageRule& rule : rules) {
    for (BatchKind kind : layout_kinds(entry)) {
      if (!rule_takes(rule, kind)) continue;
      // What needs C > 1 needs the layout to pad something (at C = 1 it is the identity): a layout
      // whose padding is the caller's, or that pads nothing, never gives it.
      if (needs_cp_above_one(rule, kind) && !pads_rows(entry)) continue;
      std::vector<CpClass> cps;
      for (CpClass cp : classes) {
        if (!(needs_cp_above_one(rule, kind) && cp == CpClass::one)) cps.push_back(cp);
      }
      if (cps.empty()) continue;  // the option needs a C above 1 that the selection does not draw
      if (!rule.by_cp) cps.resize(1);
      for (CpClass cp : cps) {
        if (!rule.by_dtype) {
          declared.emplace(combination_name(rule, kind, DTypeClass::floating, cp), 0);
          continue;
        }
        for (DTypeClass dtype : kDTypeClasses)
          declared.emplace(combination_name(rule, kind, dtype, cp), 0);
      }
    }
  }
  return declared;
}

void count_combinations(const std::vector<CoverageRule>& rules, const LayoutEntry& entry,
                        const Case& c, const std::vector<std::string>& options,
                        std::map<std::string, std::int64_t>& counts) {
  const BatchKind kind = batch_kind_of(entry, c);
  const DTypeClass dtype = dtype_class_of(c.dtype);
  const CpClass cp = cp_class_of(c.spec.cp);
  const auto count = [&](const std::string& option) {
    for (const CoverageRule& rule : rules) {
      if (rule.option != option || !rule_takes(rule, kind)) continue;
      if (needs_cp_above_one(rule, kind) && cp == CpClass::one) continue;
      const auto it = counts.find(combination_name(rule, kind, dtype, cp));
      if (it != counts.end()) ++it->second;
    }
  };
  count(kAnyCase);
  for (const std::string& option : options) count(option);
}

std::vector<std::string> missing_combinations(const std::map<std::string, std::int64_t>& counts) {
  std::vector<std::string> missing;
  for (const auto& [name, count] : counts) {
    if (count == 0) missing.push_back(name);
  }
  return missing;
}

}  // namespace cplab::properties
