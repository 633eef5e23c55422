#pragma once
// RapidCheck generators of cases (STYLE 12): constructive (draw C, then the row kind and count,
// then the documents and their lengths, then the vocabulary the size budget leaves), bounded (a
// case runs in milliseconds), shrinking toward small cases (fewer documents, shorter lengths,
// smaller C, fewer rows, no holes) and printable in one line (case.hpp).
#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "properties/case.hpp"
#include "properties/coverage.hpp"
#include "properties/layout_table.hpp"

namespace cplab::properties {

struct GenOptions {
  std::vector<std::int64_t> cp;          // C values to draw from; empty: 1..64 weighted to small
  std::int64_t max_tokens = 768;         // bound on a row's padded length L
  std::int64_t logits_budget = 1 << 16;  // bound on B·L·V (the loss property's logits)
  // The masks a case may carry (mask_choice.hpp), one drawn per case; empty: every family.
  std::vector<std::string> masks;
  // Draw only cases of this cell (batch kind, dtype class, C class), choosing among the branches
  // that give it: a sweep strides over the cells so that every one is drawn. A cell that no
  // branch gives (or C list) is not forced: the case falls elsewhere and coverage says so.
  std::optional<CaseCell> cell;
};

// Throws on a C below 1 or a token bound below 1: a sweep must refuse them before its first case.
void validate_gen_options(const GenOptions& options);

// C in 1..64: mostly small, more non-powers of two than powers, now and then large; of one C
// class when `cls` is given.
rc::Gen<std::int64_t> gen_cp(const std::vector<std::int64_t>& allowed,
                             std::optional<CpClass> cls = std::nullopt);
// BSHD row length S: just below, at or just above a multiple of C, 2C or the layout's unit D; of
// one batch kind (the layout pads it or not) when `kind` is given.
rc::Gen<std::int64_t> gen_bshd_len(const LayoutEntry& entry, const LayoutSpec& spec,
                                   std::int64_t max_tokens,
                                   std::optional<BatchKind> kind = std::nullopt);
// One packed row's documents, from one of several shapes: many tiny ones, one huge one, zeros and
// ones, lengths at multiples of 2C ± 1, or mixed; sometimes with the caller's own padding.
rc::Gen<std::vector<Document>> gen_packed_row(const LayoutEntry& entry, const LayoutSpec& spec,
                                              std::int64_t max_tokens);

// A whole case for one layout.
rc::Gen<Case> gen_case(const LayoutEntry& entry, const GenOptions& options);

// An upper bound of the padded length L the layout gives a row of the case (for the budgets).
std::int64_t estimated_padded_len(const LayoutEntry& entry, const Case& c);

// Smaller cases than c, each still valid, one step each, in the order RapidCheck tries them:
// fewer microbatches or rows; per packed row, each document removed, then each shortened by one
// token, to the multiple of the layout's unit below it (and one above that) and by half, its own
// padding dropped; shorter rows (BSHD S likewise, packed row padding one slot at a time); simpler
// data and keys; last every smaller C, smallest first (within allowed_cp when given). gen_case
// tries them after RapidCheck's own shrinks, so a shrunk case is one that none of them still
// fails: no document or token can be removed from it, and no smaller C shows the failure.
// Defined in case_shrinks.cpp, one function per shrink.
std::vector<Case> domain_shrinks(const Case& c, const std::vector<std::int64_t>& allowed_cp = {});

// The coverage tags of a case (RC_TAG): layout, C class, row kind.
std::string cp_class(std::int64_t cp);  // "cp=1", "cp=pow2", "cp=odd", "cp=even"

}  // namespace cplab::properties

namespace cplab::properties {
// RapidCheck prints counterexamples through this (found by argument-dependent lookup).
void showValue(const Case& c, std::ostream& os);
}  // namespace cplab::properties
