#pragma once
// Coverage as a check. A case falls in one cell of (batch kind, dtype class, C class); a property
// declares the verb options it must exercise, each on the batch kinds it applies to and crossed
// with the dtype and C classes where they matter; a job counts the combinations its cases drew,
// and a default sweep fails naming every declared combination that no case drew.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "properties/case.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {

// bshd: BSHD rows the layout does not pad (S at a multiple of its unit, or C = 1); bshd_padded:
// BSHD rows it pads; packed: packed rows.
enum class BatchKind : std::uint8_t { bshd, bshd_padded, packed };
enum class DTypeClass : std::uint8_t { floating, integer, byte };
// C classes of the declarations: 1, 2, an odd prime, 8 or more (not prime); 4 and 6 are "other".
enum class CpClass : std::uint8_t { one, two, prime, eight_plus, other };

inline constexpr BatchKind kBatchKinds[] = {BatchKind::bshd, BatchKind::bshd_padded,
                                            BatchKind::packed};
inline constexpr DTypeClass kDTypeClasses[] = {DTypeClass::floating, DTypeClass::integer,
                                               DTypeClass::byte};
inline constexpr CpClass kDeclaredCpClasses[] = {CpClass::one, CpClass::two, CpClass::prime,
                                                 CpClass::eight_plus};

std::string_view batch_kind_name(BatchKind k);    // "bshd", "bshd+pad", "packed"
std::string_view dtype_class_name(DTypeClass d);  // "float", "int", "byte"
std::string_view cp_class_name(CpClass c);        // "C=1", "C=2", "C=prime", "C>=8", "C=4|6"

CpClass cp_class_of(std::int64_t cp);
DTypeClass dtype_class_of(DType dtype);
bool in_dtype_class(DType dtype, DTypeClass cls);
bool in_cp_class(std::int64_t cp, CpClass cls);
// From the layout's own unit (its table entry), never from its name.
BatchKind batch_kind_of(const LayoutEntry& entry, const Case& c);

// One cell of the generators' stratification.
struct CaseCell {
  BatchKind kind = BatchKind::bshd;
  DTypeClass dtype = DTypeClass::floating;
  CpClass cp = CpClass::one;
};
std::string cell_name(const CaseCell& cell);

// The cells a layout's generator can draw with C from `allowed_cp` (empty: 1..64).
std::vector<CaseCell> drawable_cells(const LayoutEntry& entry,
                                     const std::vector<std::int64_t>& allowed_cp);
// Those cells and, where `allowed_cp` names a C of no declared class (4 or 6), the cells of that
// class too: a caller who asks for C = 4 gets C = 4 (cplab.testing's cp=4), though no
// coverage declaration asks for it.
std::vector<CaseCell> cells_for_cp(const LayoutEntry& entry,
                                   const std::vector<std::int64_t>& allowed_cp);

// A verb option a property must exercise: on which batch kinds (empty: every kind the layout
// takes), and whether each dtype class and each C class must meet it.
enum class Cross : std::uint8_t { none, cp, dtype_and_cp };
struct CoverageRule {
  CoverageRule(std::string option_name, std::vector<BatchKind> on_kinds = {},
               Cross cross = Cross::none, bool cp_above_one = false)
      : option(std::move(option_name)),
        kinds(std::move(on_kinds)),
        by_dtype(cross == Cross::dtype_and_cp),
        by_cp(cross != Cross::none),
        needs_cp_above_one(cp_above_one) {}
  std::string option;  // what the check notes in CheckNotes::options ("any": every case)
  std::vector<BatchKind> kinds;
  bool by_dtype = false;
  bool by_cp = false;
  bool needs_cp_above_one = false;  // meaningless at C = 1 (the layout is the identity there)
};
inline constexpr const char* kAnyCase = "any";

// "S fill · bshd+pad · float · C=prime": one declared combination.
std::string combination_name(const CoverageRule& rule, BatchKind kind, DTypeClass dtype,
                             CpClass cp);

// Every combination the rules declare for a layout under the C values allowed, each with count 0.
std::map<std::string, std::int64_t> declared_combinations(
    const std::vector<CoverageRule>& rules, const LayoutEntry& entry,
    const std::vector<std::int64_t>& allowed_cp);

// Adds one case to the counts: every option the check ran, in the case's cell (only declared
// combinations are counted).
void count_combinations(const std::vector<CoverageRule>& rules, const LayoutEntry& entry,
                        const Case& c, const std::vector<std::string>& options,
                        std::map<std::string, std::int64_t>& counts);

// The declared combinations no case drew.
std::vector<std::string> missing_combinations(const std::map<std::string, std::int64_t>& counts);

}  // namespace cplab::properties
