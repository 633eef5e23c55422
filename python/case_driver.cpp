// cplab-case-driver: RapidCheck's search over cplab's own generators, for cplab.testing. Debian's
// librapidcheck.a is not position-independent, so it cannot live in the Python module; this
// executable draws the cases and shrinks the failures, and the module runs the user's function on
// each case it is sent.
//
// With --attention 1 (cplab.testing.check_attention) each case also draws the attention's shape:
// query and KV heads, head dim and the magnitude of the scores, as integers RapidCheck shrinks
// beside the case (fewer heads, smaller dims, ordinary scores), and its mask made concrete. The
// line sent is the case's, then " | heads=H kv_heads=K head_dim=D scale=1eE".
//
// Protocol (one line each way per case, over stdout and stdin):
//   driver: "case <one-line case>"          module: "ok" | "fail <one-line reason>"
//   at the end, the driver: "passed <cases>" | "failed <cases> <shrinks> <one-line case>" |
//                           "error <message>"
// The cases are those of the layout's generator (gen_case), brought into what a user's sharder
// is handed: one microbatch, the primary sharded, the layout options and pad conventions the
// caller fixed (else their defaults), [B, S] positions, and only the keys it asked for.
#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "attention/schedule.hpp"
#include "core/attention_algo.hpp"
#include "core/attention_mask.hpp"
#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"
#include "layouts/layout_descriptor.hpp"
#include "properties/case.hpp"
#include "properties/checks/attention_masks.hpp"
#include "properties/coverage.hpp"
#include "properties/generators.hpp"
#include "properties/layout_table.hpp"
#include "properties/mask_choice.hpp"
#include "reference/plan.hpp"

namespace cplab::properties {
namespace {

using I = std::int64_t;

enum class Rows : std::uint8_t { any, bshd, packed };

// check_attention's fixed shape (0: drawn), algorithm (none: any; only ulysses and usp constrain
// the heads) and mask (a whole mask or a family whose sizes are drawn per case).
struct AttentionOptions {
  bool on = false;
  I heads = 0, kv_heads = 0, head_dim = 0;
  std::optional<sim::AttentionAlgo> algo;
  std::string mask = "causal";
};

struct DriverOptions {
  std::string layout;
  std::vector<I> cp;
  I cases = 100;
  std::uint64_t seed = 0;
  I max_tokens = 256;
  Rows rows = Rows::any;
  std::optional<I> pad_id;
  // The layouts' own options the caller fixed (`--option NAME=VALUE`, by declared name).
  std::vector<std::pair<const layouts::LayoutOption*, I>> fixed;
  std::optional<PadPolicy> pad_policy;
  bool embeds = false;      // inputs_embeds cases too (else input_ids only)
  bool extra_keys = false;  // the extra token keys (token_weight, token_planes, token_features)
  AttentionOptions attention;
};

I parse_int(const std::string& flag, const std::string& text) {
  I value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  CPLAB_CHECK(ec == std::errc() && end == text.data() + text.size(), "{}: '{}' is not an integer",
              flag, text);
  return value;
}

DriverOptions parse_args(int argc, char** argv) {
  DriverOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    CPLAB_CHECK(i + 1 < argc, "{} needs a value", flag);
    const std::string value = argv[++i];
    if (flag == "--layout") {
      o.layout = value;
    } else if (flag == "--cp") {
      std::size_t start = 0;
      while (start <= value.size()) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        o.cp.push_back(parse_int(flag, value.substr(start, comma - start)));
        start = comma + 1;
      }
    } else if (flag == "--cases") {
      o.cases = parse_int(flag, value);
    } else if (flag == "--seed") {
      o.seed = static_cast<std::uint64_t>(parse_int(flag, value));
    } else if (flag == "--max-tokens") {
      o.max_tokens = parse_int(flag, value);
    } else if (flag == "--rows") {
      CPLAB_CHECK(value == "any" || value == "bshd" || value == "packed",
                  "--rows: any, bshd or packed, not '{}'", value);
      o.rows = value == "any" ? Rows::any : value == "bshd" ? Rows::bshd : Rows::packed;
    } else if (flag == "--pad-id") {
      o.pad_id = parse_int(flag, value);
    } else if (flag == "--pad-policy") {
      CPLAB_CHECK(value == "spec" || value == "zero", "--pad-policy: spec or zero, not '{}'",
                  value);
      o.pad_policy = value == "spec" ? PadPolicy::spec : PadPolicy::zero;
    } else if (flag == "--option") {
      const std::size_t eq = value.find('=');
      CPLAB_CHECK(eq != std::string::npos, "--option: expected NAME=VALUE, got '{}'", value);
      const layouts::LayoutOption* option = layouts::option_named(value.substr(0, eq));
      CPLAB_CHECK(option != nullptr, "--option: no layout declares an option '{}'",
                  value.substr(0, eq));
      o.fixed.emplace_back(option, parse_int(flag, value.substr(eq + 1)));
    } else if (flag == "--embeds") {
      o.embeds = value == "1";
    } else if (flag == "--extra-keys") {
      o.extra_keys = value == "1";
    } else if (flag == "--attention") {
      o.attention.on = value == "1";
    } else if (flag == "--heads") {
      o.attention.heads = parse_int(flag, value);
    } else if (flag == "--kv-heads") {
      o.attention.kv_heads = parse_int(flag, value);
    } else if (flag == "--head-dim") {
      o.attention.head_dim = parse_int(flag, value);
    } else if (flag == "--algo") {
      o.attention.algo = sim::parse_algo(value);
    } else if (flag == "--mask") {
      o.attention.mask = mask_choice_text(parse_mask_choice(value));  // one line when bad
    } else {
      CPLAB_FAIL("unknown option {}", flag);
    }
  }
  CPLAB_CHECK(!o.layout.empty(), "--layout is required");
  CPLAB_CHECK(o.cases >= 1 && o.cases <= limits::kMaxCasesPerJob, "--cases must be in [1, {}]",
              limits::kMaxCasesPerJob);
  return o;
}

// The drawn case as a user's sharder takes it. A function of the drawn case alone, so RapidCheck's
// shrinks of the drawn case are shrinks of this one.
Case as_handed_over(Case c, const DriverOptions& o) {
  if (c.packed()) {
    c.docs.resize(1);  // one packed row: its own microbatch
    c.rows = 1;
  }
  c.spec.microbatches = 1;
  c.spec.shard_primary = true;
  if (o.pad_policy) c.spec.pad_policy = *o.pad_policy;
  if (o.pad_id) {
    c.spec.pad_token_id = *o.pad_id;
    c.vocab = std::max(c.vocab, *o.pad_id + 1);
  }
  // A sharder cannot know a drawn option: each is what the caller fixed, else its default. An
  // attention is handed its slots' facts (meta), not the options: it keeps the drawn ones (block
  // and chunk sizes around the row's own length) unless the caller fixed them.
  if (!o.attention.on) {
    c.spec = layouts::without_options(c.spec);
    c.automatic.clear();
  }
  for (const auto& [option, value] : o.fixed) {
    option->set(c.spec, value);
    std::erase(c.automatic, std::string(option->name));
  }
  if (!o.embeds) c.primary = Primary::ids;
  if (!o.extra_keys) c.extra_key = c.extra_planes = c.extra_features = false;
  if (c.positions == PositionKind::mrope || c.positions == PositionKind::shared)
    c.positions = PositionKind::per_row;
  resolve_case_options(c);
  return c;
}

// Whether the case is one the layout lays out under the options the caller fixed (a fixed ring
// degree or block size can leave a drawn C or S without a plan): cases that are not are discarded.
bool plannable(const Case& c) {
  try {
    validate_case(c);
    LayoutSpec spec = c.spec;
    for (const auto& row : c.docs) {
      std::vector<I> lens, padded;
      for (const Document& d : row) {
        lens.push_back(d.real);
        padded.push_back(d.real + d.extra);
      }
      reference::plan_row(spec, c.seq_len, &lens, &padded);
    }
    if (!c.packed()) reference::plan_row(spec, c.seq_len);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The raw draws of an attention case's shape: RapidCheck shrinks each toward 0 (one head per
// rank, KV heads = heads, head dim 1, ordinary scores).
struct ShapeDraw {
  I heads = 0, kv = 0, dim = 0, scale = 0;
};

// Head dims drawn: 1-8 in most cases (cheap, and a head-dim bug shows at 2 as at 128), the sizes
// production runs in the rest.
constexpr I kWideHeadDims[] = {16, 32, 64, 128};

// " | heads=H kv_heads=K head_dim=D scale=1eE" for case c (its mask made concrete), or none when
// the caller's fixed shape or algorithm cannot run at the case's C.
std::optional<std::string> attention_suffix(Case& c, const AttentionOptions& a,
                                            const ShapeDraw& draw) {
  const sim::LayoutDescriptor& layout = sim::layout_descriptor(c.spec.layout);
  const I cp = c.spec.cp, ring = sim::layout_ring_degree(layout, c.spec);
  // U: the ranks a query head's sequence is spread over by an all-to-all of heads.
  const I split = !a.algo                                  ? 1
                  : *a.algo == sim::AttentionAlgo::ulysses ? cp
                  : *a.algo == sim::AttentionAlgo::usp     ? cp / std::max<I>(1, ring)
                                                           : 1;
  const I heads = a.heads > 0 ? a.heads : split * (1 + draw.heads % 4);
  if (heads % split != 0) return std::nullopt;
  std::vector<I> kv_choices;  // H first: the simplest; then GQA down to MQA
  for (I k = heads; k >= 1; --k) {
    if (heads % k == 0 && (k % split == 0 || split % k == 0)) kv_choices.push_back(k);
  }
  const I kv = a.kv_heads > 0 ? a.kv_heads
                              : kv_choices[static_cast<std::size_t>(draw.kv) % kv_choices.size()];
  if (std::find(kv_choices.begin(), kv_choices.end(), kv) == kv_choices.end()) return std::nullopt;
  const I dim = a.head_dim > 0  ? a.head_dim
                : draw.dim < 12 ? 1 + draw.dim % 8
                                : kWideHeadDims[static_cast<std::size_t>(draw.dim - 12) % 4];
  if (a.algo) {
    const sim::AttentionShape shape{.heads = heads, .kv_heads = kv, .head_dim = dim};
    if (!sim::schedule_refusal(layout, c.spec, *a.algo, shape).empty()) return std::nullopt;
  }
  // Scores of magnitude 1e1 to 1e4 in four cases of ten: what a merge without max subtraction
  // overflows at.
  const I scale = draw.scale < 6 ? 0 : draw.scale - 5;
  LayoutSpec spec = c.spec;
  std::vector<I> lens, padded;
  if (c.packed()) {
    for (const Document& d : c.docs.front()) {
      lens.push_back(d.real);
      padded.push_back(d.real + d.extra);
    }
  }
  const RowPlan row = c.packed() ? reference::plan_row(spec, c.seq_len, &lens, &padded)
                                 : reference::plan_row(spec, c.seq_len);
  c.mask = a.mask;
  c.mask = sim::mask_text(draw_mask(c, row.local_len(), 0xa77e));
  return fmt::format(" | heads={} kv_heads={} head_dim={} scale=1e{}", heads, kv, dim, scale);
}

void send(const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

class ShrinkCounter final : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override { ++cases; }
  void onShrinkTried(const rc::detail::CaseDescription&, bool accepted) override {
    shrinks += accepted ? 1 : 0;
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  I cases = 0, shrinks = 0;
};

int run(const DriverOptions& o) {
  const LayoutEntry& entry = layout_entry(o.layout);
  if (o.attention.algo) {
    const std::string refused =
        sim::layout_refusal(sim::layout_descriptor(o.layout), *o.attention.algo);
    CPLAB_CHECK(refused.empty(), "{}", refused);
  }
  GenOptions gen;
  gen.cp = o.cp;
  gen.max_tokens = o.max_tokens;
  validate_gen_options(gen);
  // As a sweep job does: every other case from one cell (batch kind, dtype class, C class) in
  // turn, so that every row kind and C class is drawn; the rest freely. --rows keeps the cells of
  // one row kind and draws the rest from them too.
  std::vector<rc::Gen<Case>> gens;
  for (const CaseCell& cell : cells_for_cp(entry, gen.cp)) {
    const bool packed = cell.kind == BatchKind::packed;
    if ((o.rows == Rows::bshd && packed) || (o.rows == Rows::packed && !packed)) continue;
    GenOptions directed = gen;
    directed.cell = cell;
    gens.push_back(gen_case(entry, directed));
  }
  CPLAB_CHECK(!gens.empty(), "layout {} draws no {} rows", o.layout,
              o.rows == Rows::packed ? "packed" : "BSHD");
  const std::size_t cells = gens.size();
  if (o.rows == Rows::any) gens.push_back(gen_case(entry, gen));
  I drawn = 0;
  std::size_t which = 0;
  bool shrinking = false;
  std::string last_failing;
  std::string reply;
  const auto property = rc::detail::toProperty([&] {
    if (!shrinking) {
      which = drawn % 2 == 0 || gens.size() == cells
                  ? static_cast<std::size_t>(o.seed + static_cast<std::uint64_t>(drawn / 2)) % cells
                  : gens.size() - 1;
      ++drawn;
    }
    Case c = as_handed_over(*gens[which], o);
    RC_PRE(plannable(c));
    std::string suffix;
    if (o.attention.on) {
      const ShapeDraw draw{.heads = *rc::gen::inRange<I>(0, 4),
                           .kv = *rc::gen::inRange<I>(0, 8),
                           .dim = *rc::gen::inRange<I>(0, 16),
                           .scale = *rc::gen::inRange<I>(0, 10)};
      const std::optional<std::string> shaped = attention_suffix(c, o.attention, draw);
      RC_PRE(shaped.has_value());
      suffix = *shaped;
    }
    const std::string line = print_case(c) + suffix;
    send("case " + line);
    if (!std::getline(std::cin, reply)) std::exit(3);  // the module went away: nothing to report
    if (reply == "ok") return;
    shrinking = true;
    last_failing = line;
    RC_FAIL(reply.rfind("fail ", 0) == 0 ? reply.substr(5) : reply);
  });
  rc::detail::TestParams params;
  params.seed = o.seed;
  params.maxSuccess = static_cast<int>(o.cases);
  params.maxSize = 100;
  ShrinkCounter listener;
  const rc::detail::TestMetadata metadata{"cplab.testing/" + o.layout, o.layout};
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  const rc::detail::TestResult outcome =
      rc::detail::checkProperty(property, metadata, params, listener, no_reproduce);
  if (outcome.template is<rc::detail::SuccessResult>()) {
    send(fmt::format("passed {}", outcome.template get<rc::detail::SuccessResult>().numSuccess));
  } else if (outcome.template is<rc::detail::FailureResult>() && !last_failing.empty()) {
    send(fmt::format("failed {} {} {}", listener.cases, listener.shrinks, last_failing));
  } else {
    std::ostringstream text;
    rc::detail::printResultMessage(outcome, text);
    std::string message = text.str();
    for (char& ch : message) ch = ch == '\n' ? ' ' : ch;
    send("error the cases could not be drawn: " + message);
  }
  return 0;
}

}  // namespace
}  // namespace cplab::properties

int main(int argc, char** argv) {
  try {
    return cplab::properties::run(cplab::properties::parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::string message = e.what();
    for (char& ch : message) ch = ch == '\n' ? ' ' : ch;
    cplab::properties::send("error " + message);
    return 2;
  }
}
