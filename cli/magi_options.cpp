#include "cli/magi_options.hpp"

#include <charconv>

#include "reference/layouts/magi_chunk_size.hpp"
#include "reference/types/error.hpp"

namespace cplab::cli {

void add_magi_options(CLI::App* sub, MagiOptions& options) {
  options.chunk_size_option =
      sub->add_option("--chunk-size", options.chunk_size,
                      "magi: chunk size K, or auto (min(512, ceil(S / (8·C))), MagiAttention's "
                      "cap for short rows)")
          ->capture_default_str();
  sub->add_flag("--chunk-pad-at-cp1", options.pad_at_cp1,
                "magi: pad to a multiple of K even at C = 1 (MagiAttention's own dispatch)");
}

LayoutSpec apply_magi_options(LayoutSpec spec, const MagiOptions& options, std::int64_t seq_len) {
  spec.chunk_pad_at_cp1 = options.pad_at_cp1;
  if (options.automatic()) {
    spec.chunk_size = reference::magi_auto_chunk_size(LayoutSpec{}.chunk_size, seq_len, spec.cp);
    return spec;
  }
  const std::string& text = options.chunk_size;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  CPLAB_CHECK(!text.empty() && ec == std::errc() && end == text.data() + text.size() && value >= 1,
              "--chunk-size '{}': expected a positive integer or auto", text);
  spec.chunk_size = value;
  return spec;
}

}  // namespace cplab::cli
