#include "properties/case.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "core/error.hpp"
#include "core/layout_option.hpp"
#include "core/limits.hpp"
#include "properties/mask_choice.hpp"

namespace cplab::properties {

namespace {

constexpr std::string_view kPolicyNames[] = {"spec", "zero"};
constexpr std::string_view kPrimaryNames[] = {"ids", "embeds"};
constexpr std::string_view kPositionNames[] = {"none", "per_row", "shared", "mrope"};
constexpr std::string_view kRowPositionNames[] = {"arange", "offset", "restart"};
constexpr std::string_view kKeyDTypeNames[] = {"wide", "narrow"};
constexpr std::string_view kKeyNames[] = {"loss_mask", "padding_mask", "extra", "planes",
                                          "features"};

// Overflow-safe: a case string may name any 64-bit lengths.
std::int64_t row_occupancy(const std::vector<Document>& row) {
  std::int64_t sum = 0;
  for (const Document& d : row) {
    sum = limits::add(sum, limits::add(d.real, d.extra, "case key 'docs'"), "case key 'docs'");
  }
  return sum;
}

std::string print_docs(const std::vector<std::vector<Document>>& docs) {
  if (docs.empty()) return "-";
  std::vector<std::string> rows;
  for (const auto& row : docs) {
    std::vector<std::string> items;
    for (const Document& d : row) {
      items.push_back(d.extra ? fmt::format("{}+{}", d.real, d.extra) : fmt::format("{}", d.real));
    }
    rows.push_back(fmt::format("{}", fmt::join(items, ",")));
  }
  return fmt::format("{}", fmt::join(rows, "/"));
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

template <typename T>
T parse_number(std::string_view key, std::string_view text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  CPLAB_CHECK(error == std::errc() && end == text.data() + text.size() && !text.empty(),
              "case key '{}': '{}' is not a number", key, text);
  return value;
}

template <typename Enum, std::size_t N>
Enum parse_name(std::string_view key, std::string_view text, const std::string_view (&names)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  CPLAB_FAIL("case key '{}': '{}' is not one of {}", key, text, fmt::join(names, ", "));
}

std::vector<std::vector<Document>> parse_docs(std::string_view text) {
  std::vector<std::vector<Document>> docs;
  if (text == "-") return docs;
  for (std::string_view row_text : split(text, '/')) {
    std::vector<Document> row;
    for (std::string_view item : split(row_text, ',')) {
      const std::size_t plus = item.find('+');
      Document d;
      d.real = parse_number<std::int64_t>("docs", item.substr(0, plus));
      if (plus != std::string_view::npos) {
        d.extra = parse_number<std::int64_t>("docs", item.substr(plus + 1));
        // "5+0" would print back as "5": refuse it so that parse and print stay exact inverses.
        CPLAB_CHECK(d.extra > 0, "case key 'docs': '{}' has no padding after '+'", item);
      }
      row.push_back(d);
    }
    docs.push_back(std::move(row));
  }
  return docs;
}

std::vector<std::string_view> present_keys(const Case& c) {
  std::vector<std::string_view> keys;
  if (c.loss_mask) keys.push_back("loss_mask");
  if (c.padding_mask) keys.push_back("padding_mask");
  if (c.extra_key) keys.push_back("extra");
  if (c.extra_planes) keys.push_back("planes");
  if (c.extra_features) keys.push_back("features");
  return keys;
}

void parse_keys(std::string_view text, Case& c) {
  c.loss_mask = c.padding_mask = c.extra_key = c.extra_planes = c.extra_features = false;
  if (text == "-") return;
  bool* const flags[] = {&c.loss_mask, &c.padding_mask, &c.extra_key, &c.extra_planes,
                         &c.extra_features};
  for (std::string_view key : split(text, ',')) {
    *flags[static_cast<std::size_t>(parse_name<int>("keys", key, kKeyNames))] = true;
  }
}

}  // namespace

std::string_view primary_name(Primary p) { return kPrimaryNames[static_cast<int>(p)]; }
std::string_view position_kind_name(PositionKind k) { return kPositionNames[static_cast<int>(k)]; }
std::string_view row_positions_name(RowPositions p) {
  return kRowPositionNames[static_cast<int>(p)];
}
std::string_view key_dtypes_name(KeyDTypes k) { return kKeyDTypeNames[static_cast<int>(k)]; }

bool Case::operator==(const Case& o) const {
  return spec == o.spec && rows == o.rows && seq_len == o.seq_len && docs == o.docs &&
         vocab == o.vocab && primary == o.primary && dim == o.dim && dtype == o.dtype &&
         positions == o.positions && row_positions == o.row_positions && left_pad == o.left_pad &&
         key_dtypes == o.key_dtypes && loss_mask == o.loss_mask && padding_mask == o.padding_mask &&
         extra_key == o.extra_key && extra_planes == o.extra_planes &&
         extra_features == o.extra_features && ignore_permille == o.ignore_permille &&
         invalid_permille == o.invalid_permille && pad_content_permille == o.pad_content_permille &&
         seed == o.seed && mask == o.mask && automatic == o.automatic;
}

bool Case::is_automatic(const layouts::LayoutOption& option) const {
  return std::find(automatic.begin(), automatic.end(), option.name) != automatic.end();
}

void resolve_case_options(Case& c) {
  if (c.seq_len < 1 || c.spec.cp < 1) return;
  for (const std::string& name : c.automatic) {
    const layouts::LayoutOption* o = layouts::option_named(name);
    if (o != nullptr && o->automatic != nullptr) o->set(c.spec, o->automatic(c.seq_len, c.spec.cp));
  }
}

void validate_case(const Case& c) {
  const LayoutSpec& s = c.spec;
  CPLAB_CHECK(!s.layout.empty(), "case has no layout name");
  CPLAB_CHECK(s.cp >= 1, "case: cp must be >= 1, got {}", s.cp);
  CPLAB_CHECK(s.microbatches >= 1, "case: mb must be >= 1, got {}", s.microbatches);
  if (!c.mask.empty()) (void)parse_mask_choice(c.mask);
  for (const std::string& name : c.automatic) {
    const layouts::LayoutOption* o = layouts::option_named(name);
    CPLAB_CHECK(o != nullptr && o->automatic != nullptr, "case: option '{}' has no auto value",
                name);
    if (c.seq_len < 1) continue;
    const std::int64_t want = o->automatic(c.seq_len, s.cp);
    CPLAB_CHECK(o->of(s) == want, "case: {}=auto means {}={} for S={} cp={}, got {}={}", o->key,
                o->key, want, c.seq_len, s.cp, o->key, o->of(s));
  }
  CPLAB_CHECK(c.rows >= 1 && c.rows % s.microbatches == 0,
              "case: rows={} must be a positive multiple of mb={}", c.rows, s.microbatches);
  CPLAB_CHECK(c.seq_len >= 1, "case: S must be >= 1, got {}", c.seq_len);
  CPLAB_CHECK(c.vocab >= 2, "case: vocab must be >= 2, got {}", c.vocab);
  CPLAB_CHECK(s.pad_token_id >= 0 && s.pad_token_id < c.vocab,
              "case: pad_id={} is not in [0, vocab={})", s.pad_token_id, c.vocab);
  CPLAB_CHECK(c.dim >= 1, "case: dim must be >= 1, got {}", c.dim);
  for (int permille : {c.ignore_permille, c.invalid_permille, c.pad_content_permille}) {
    CPLAB_CHECK(permille >= 0 && permille <= 1000, "case: a permille is out of [0, 1000]: {}",
                permille);
  }
  CPLAB_CHECK(c.left_pad >= 0 && c.left_pad <= c.seq_len, "case: left_pad={} is not in [0, S={}]",
              c.left_pad, c.seq_len);
  // Upper bounds before anything is built: the case's tensors are rows × L × max(dim, vocab).
  limits::check_spec(s);
  CPLAB_CHECK(c.rows <= limits::kMaxBatchSlots, "case: rows={} is more than cplab's limit of {}",
              c.rows, limits::kMaxBatchSlots);
  std::int64_t documents = 0;
  for (const auto& row : c.docs) {
    CPLAB_CHECK(static_cast<std::int64_t>(row.size()) <= limits::kMaxDocuments,
                "case: a packed row of {} documents is more than cplab's limit of {}", row.size(),
                limits::kMaxDocuments);
    documents = std::max(documents, static_cast<std::int64_t>(row.size()));
  }
  const std::int64_t bound = limits::padded_len_bound(s, c.seq_len, documents);
  const std::int64_t elements = limits::mul(limits::mul(c.rows, bound, "case: rows × L"),
                                            std::max(c.dim, c.vocab), "case: rows × L × width");
  CPLAB_CHECK(elements <= limits::kMaxCaseElements,
              "case: rows={} × L<={} × max(dim={}, vocab={}) = {} elements, more than cplab's "
              "limit of {} per tensor",
              c.rows, bound, c.dim, c.vocab, elements, limits::kMaxCaseElements);
  if (c.packed()) {
    CPLAB_CHECK(c.row_positions == RowPositions::arange && c.left_pad == 0,
                "case: rowpos= and left_pad= describe BSHD rows; packed rows take their positions "
                "and padding from docs=");
    CPLAB_CHECK(static_cast<std::int64_t>(c.docs.size()) == c.rows && c.rows == s.microbatches,
                "case: packed rows need one row per microbatch: {} doc rows, rows={}, mb={}",
                c.docs.size(), c.rows, s.microbatches);
    CPLAB_CHECK(c.positions != PositionKind::shared,
                "case: a shared [1,S] position row is BSHD only");
    for (std::size_t b = 0; b < c.docs.size(); ++b) {
      CPLAB_CHECK(!c.docs[b].empty(), "case: packed row {} has no document", b);
      for (const Document& d : c.docs[b]) {
        CPLAB_CHECK(d.real >= 0 && d.extra >= 0, "case: packed row {} has a negative length", b);
      }
      CPLAB_CHECK(row_occupancy(c.docs[b]) <= c.seq_len,
                  "case: packed row {} needs {} slots, more than S={}", b, row_occupancy(c.docs[b]),
                  c.seq_len);
    }
  }
}

namespace {

std::string print_option(const Case& c, const layouts::LayoutOption& o) {
  if (c.is_automatic(o)) return fmt::format(" {}=auto", o.key);
  return fmt::format(" {}={}", o.key, o.of(c.spec));
}

}  // namespace

std::string print_case(const Case& c) {
  const LayoutSpec& s = c.spec;
  const auto keys = present_keys(c);
  // The layouts' options: those of the first format in every case after cp=; keys added after it
  // at the end, only when they differ from their defaults, so that every case printed before them
  // reads and prints the same.
  std::string first, later;
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    if (o->case_order == 0) {
      first += print_option(c, *o);
    } else if (o->of(s) != o->fallback || c.is_automatic(*o)) {
      later += print_option(c, *o);
    }
  }
  return fmt::format(
      "{} cp={}{} mb={} rows={} S={} docs={} vocab={} pad_id={} policy={} shard_primary={} "
      "primary={} dim={} dtype={} pos={} rowpos={} left_pad={} kdt={} keys={} ignore={} "
      "invalid={} pad_content={} seed={}{}{}",
      s.layout, s.cp, first, s.microbatches, c.rows, c.seq_len, print_docs(c.docs), c.vocab,
      s.pad_token_id, kPolicyNames[static_cast<int>(s.pad_policy)], s.shard_primary ? 1 : 0,
      primary_name(c.primary), c.dim, dtype_name(c.dtype), position_kind_name(c.positions),
      row_positions_name(c.row_positions), c.left_pad, key_dtypes_name(c.key_dtypes),
      keys.empty() ? std::string("-") : fmt::format("{}", fmt::join(keys, ",")), c.ignore_permille,
      c.invalid_permille, c.pad_content_permille, c.seed, later,
      c.mask.empty() ? std::string() : " mask=" + c.mask);
}

namespace {

using Setter = std::function<void(std::string_view)>;

// Whether a case gave rows= and S=: packed rows follow from docs= where it did not.
struct GivenLengths {
  bool rows = false;
  bool seq_len = false;
};

// The setter of every key of the case format but the layouts' options, each writing into c.
std::map<std::string_view, Setter> case_key_setters(Case& c, GivenLengths& given) {
  const auto num = [](std::string_view key, auto& field) {
    return Setter([key, &field](std::string_view v) {
      field = parse_number<std::remove_reference_t<decltype(field)>>(key, v);
    });
  };
  return {
      {"cp", num("cp", c.spec.cp)},
      {"mb", num("mb", c.spec.microbatches)},
      {"rows",
       [&](std::string_view v) {
         c.rows = parse_number<std::int64_t>("rows", v);
         given.rows = true;
       }},
      {"S",
       [&](std::string_view v) {
         c.seq_len = parse_number<std::int64_t>("S", v);
         given.seq_len = true;
       }},
      {"docs", [&](std::string_view v) { c.docs = parse_docs(v); }},
      {"vocab", num("vocab", c.vocab)},
      {"pad_id", num("pad_id", c.spec.pad_token_id)},
      {"policy",
       [&](std::string_view v) {
         c.spec.pad_policy = parse_name<PadPolicy>("policy", v, kPolicyNames);
       }},
      {"shard_primary",
       [&](std::string_view v) {
         const int flag = parse_number<int>("shard_primary", v);
         CPLAB_CHECK(flag == 0 || flag == 1, "case key 'shard_primary': '{}' is not 0 or 1", v);
         c.spec.shard_primary = flag == 1;
       }},
      {"primary",
       [&](std::string_view v) { c.primary = parse_name<Primary>("primary", v, kPrimaryNames); }},
      {"dim", num("dim", c.dim)},
      {"dtype", [&](std::string_view v) { c.dtype = parse_dtype(v); }},
      {"pos",
       [&](std::string_view v) {
         c.positions = parse_name<PositionKind>("pos", v, kPositionNames);
       }},
      {"rowpos",
       [&](std::string_view v) {
         c.row_positions = parse_name<RowPositions>("rowpos", v, kRowPositionNames);
       }},
      {"left_pad", num("left_pad", c.left_pad)},
      {"kdt",
       [&](std::string_view v) { c.key_dtypes = parse_name<KeyDTypes>("kdt", v, kKeyDTypeNames); }},
      {"keys", [&](std::string_view v) { parse_keys(v, c); }},
      {"ignore", num("ignore", c.ignore_permille)},
      {"invalid", num("invalid", c.invalid_permille)},
      {"pad_content", num("pad_content", c.pad_content_permille)},
      {"seed", num("seed", c.seed)},
      {"mask",
       [&](std::string_view v) { c.mask = mask_choice_text(parse_mask_choice(std::string(v))); }},
  };
}

// Every layout's options, by their case keys (a case may carry another layout's: m and K are in
// every case).
void add_option_setters(Case& c, std::map<std::string_view, Setter>& setters) {
  for (const layouts::LayoutOption* o : layouts::all_options()) {
    setters.emplace(o->key, [&c, o](std::string_view v) {
      if (v == "auto" && o->automatic != nullptr) {
        c.automatic.emplace_back(o->name);
        std::sort(c.automatic.begin(), c.automatic.end());
        return;
      }
      const auto value = parse_number<std::int64_t>(o->key, v);
      CPLAB_CHECK(!o->is_switch || value == 0 || value == 1, "case key '{}': '{}' is not 0 or 1",
                  o->key, v);
      o->set(c.spec, value);
    });
  }
}

// Each key=value word after the layout, through its key's setter; every key at most once.
void apply_key_values(const std::vector<std::string_view>& words,
                      const std::map<std::string_view, Setter>& setters) {
  std::set<std::string_view> seen;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::size_t eq = words[i].find('=');
    CPLAB_CHECK(eq != std::string_view::npos, "case word '{}' is not key=value", words[i]);
    const std::string_view key = words[i].substr(0, eq);
    const auto it = setters.find(key);
    CPLAB_CHECK(it != setters.end(), "unknown case key '{}'", key);
    CPLAB_CHECK(seen.insert(key).second, "case key '{}' given twice", key);
    it->second(words[i].substr(eq + 1));
  }
}

}  // namespace

Case parse_case(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::string_view word : split(text, ' ')) {
    if (!word.empty()) words.push_back(word);
  }
  CPLAB_CHECK(!words.empty(), "empty case: expected '<layout> cp=C key=value ...'");
  Case c;
  c.spec.layout = std::string(words[0]);
  CPLAB_CHECK(words[0].find('=') == std::string_view::npos,
              "case must start with a layout name, got '{}'", words[0]);
  GivenLengths given;
  std::map<std::string_view, Setter> setters = case_key_setters(c, given);
  add_option_setters(c, setters);
  apply_key_values(words, setters);
  // Packed rows follow from docs= when left out: one row per document row, S the longest row.
  if (c.packed() && !given.rows) c.rows = static_cast<std::int64_t>(c.docs.size());
  if (c.packed() && !given.seq_len) {
    c.seq_len = 1;
    for (const auto& row : c.docs) c.seq_len = std::max(c.seq_len, row_occupancy(row));
  }
  resolve_case_options(c);
  validate_case(c);
  return c;
}

std::string case_headline(const Case& c) {
  return fmt::format("{} cp={} dtype={} {}", c.spec.layout, c.spec.cp, dtype_name(c.dtype),
                     c.packed() ? fmt::format("docs={}", print_docs(c.docs))
                                : fmt::format("rows={} S={}", c.rows, c.seq_len));
}

}  // namespace cplab::properties
