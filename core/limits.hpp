#pragma once
// The sizes cplab accepts, and overflow-safe arithmetic to check them with. Every input (command
// line, .npy and torch.save files, case strings) is checked against these before anything is
// allocated for it, so that a hostile or mistaken size is one line of error, never a wrapped
// product, a multi-gigabyte allocation or a crash. The README lists the same numbers.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/layout_spec.hpp"

namespace cplab::limits {

inline constexpr std::int64_t kMaxCp = 1024;                          // C: one thread per rank
inline constexpr std::int64_t kMaxRowTokens = std::int64_t{1} << 24;  // S of one row (16 Mi)
inline constexpr std::int64_t kMaxPadUnit = std::int64_t{1} << 24;    // C·m, 2C, K·C
inline constexpr std::int64_t kMaxPaddedLen = std::int64_t{1} << 25;  // L of one row, upper bound
inline constexpr std::int64_t kMaxDocuments = std::int64_t{1} << 20;  // documents of one packed row
// Slots planned over a whole batch (rows × L): the plan keeps several 8-byte facts per slot, so
// this bounds the plan's memory to a few GiB.
inline constexpr std::int64_t kMaxBatchSlots = std::int64_t{1} << 25;
// Elements of the largest tensor a generated case builds (rows × L × max(dim, vocab)).
inline constexpr std::int64_t kMaxCaseElements = std::int64_t{1} << 26;
// RapidCheck keeps about 8 bytes of bookkeeping per case to run (2^30 cases exhaust an 8 GiB
// address space before the first case), and a job of 10^7 cases already runs for hours.
inline constexpr std::int64_t kMaxCasesPerJob = 10000000;

// a + b and a · b, or a cplab::Error naming `what` when the exact result does not fit in int64.
std::int64_t add(std::int64_t a, std::int64_t b, std::string_view what);
std::int64_t mul(std::int64_t a, std::int64_t b, std::string_view what);
std::int64_t sum(const std::vector<std::int64_t>& values, std::string_view what);

// Checks the spec's numbers against the limits (C, C·m, 2C, K·C), overflow-safe.
void check_spec(const LayoutSpec& spec);

// An upper bound of the padded length L any layout gives a row of caller_len slots holding
// `documents` packed documents (0 for a BSHD row), after check_spec; refuses rows past the limits.
std::int64_t padded_len_bound(const LayoutSpec& spec, std::int64_t caller_len,
                              std::int64_t documents);

// One packed row's documents: count, each length, and their (overflow-checked) sum within S.
// Returns the sum.
std::int64_t check_documents(const std::vector<std::int64_t>& lens, std::string_view what);

}  // namespace cplab::limits
