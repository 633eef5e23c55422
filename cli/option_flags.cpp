#include "cli/option_flags.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/error.hpp"
#include "core/limits.hpp"

namespace cplab::cli {

bool OptionFlags::given(const layouts::LayoutOption& option) const {
  for (const Flag& f : flags) {
    if (f.option == &option) return f.cli != nullptr && f.cli->count() > 0;
  }
  return false;
}

bool OptionFlags::automatic() const {
  return std::any_of(flags.begin(), flags.end(), [](const Flag& f) {
    return f.cli != nullptr && f.cli->count() > 0 && f.text == "auto";
  });
}

void add_option_flags(CLI::App* sub, OptionFlags& flags) {
  flags.flags.clear();
  flags.flags.reserve(layouts::all_options().size());  // CLI11 keeps pointers into the entries
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    OptionFlags::Flag& f = flags.flags.emplace_back();
    f.option = o;
    if (o->is_switch) {
      f.cli = sub->add_flag(o->flag, f.on, o->help);
    } else {
      f.text = std::to_string(o->fallback);
      f.cli = sub->add_option(o->flag, f.text, o->help)->capture_default_str();
    }
  }
}

LayoutSpec apply_option_flags(LayoutSpec spec, const OptionFlags& flags, std::int64_t seq_len) {
  for (const OptionFlags::Flag& f : flags.flags) {
    if (f.cli == nullptr || f.cli->count() == 0) continue;
    const layouts::LayoutOption& o = *f.option;
    if (o.is_switch) {
      o.set(spec, f.on ? 1 : 0);
      continue;
    }
    if (o.automatic != nullptr && f.text == "auto") {
      o.set(spec, o.automatic(seq_len, spec.cp));
      continue;
    }
    std::int64_t value = 0;
    const char* const end = f.text.data() + f.text.size();
    const auto [stop, ec] = std::from_chars(f.text.data(), end, value);
    CPLAB_CHECK(ec != std::errc::result_out_of_range || stop != end,
                "{} '{}': outside the range of a 64-bit integer", o.flag, f.text);
    CPLAB_CHECK(!f.text.empty() && ec == std::errc() && stop == end,
                "{} '{}': expected an integer{}", o.flag, f.text,
                o.automatic != nullptr ? " or auto" : "");
    // Named by its flag here; a C out of range is validate_spec's to report.
    if (spec.cp >= 1 && spec.cp <= limits::kMaxCp) {
      CPLAB_CHECK(value >= o.least && value <= o.most_at(spec.cp),
                  "{} {}: {} must be in [{}, {}] at cp={}{}", o.flag, f.text, o.what, o.least,
                  o.most_at(spec.cp), spec.cp, o.automatic != nullptr ? ", or auto" : "");
    }
    o.set(spec, value);
  }
  return spec;
}

}  // namespace cplab::cli
