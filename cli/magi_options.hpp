#pragma once
// The options of the magi layout every command that plans a row takes: `--chunk-size K|auto`
// (auto: MagiAttention's cap for short rows, min(512, ceil(S / (8·C)))) and `--chunk-pad-at-cp1`
// (pad to a multiple of K even at C = 1, as MagiAttention's own dispatch does).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "reference/types/layout_spec.hpp"

namespace cplab::cli {

struct MagiOptions {
  std::string chunk_size = std::to_string(LayoutSpec{}.chunk_size);
  bool pad_at_cp1 = false;
  CLI::Option* chunk_size_option = nullptr;

  bool chunk_size_given() const { return chunk_size_option && chunk_size_option->count() > 0; }
  bool automatic() const { return chunk_size == "auto"; }
};

void add_magi_options(CLI::App* sub, MagiOptions& options);
// spec with the options applied; an auto chunk size needs the row length S (seq_len). Throws a
// one-line cplab::Error on a chunk size that is neither a positive integer nor auto.
LayoutSpec apply_magi_options(LayoutSpec spec, const MagiOptions& options, std::int64_t seq_len);

}  // namespace cplab::cli
