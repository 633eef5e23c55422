#include "perf/bench_json.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace cplab::perf {
namespace {

using json = nlohmann::json;

// The spellings of a non-finite double by the writers of benchmark JSON.
constexpr std::array<std::string_view, 12> kNonFinite = {"-Infinity", "Infinity", "-NaN", "NaN",
                                                         "-nan",      "nan",      "-inf", "inf",
                                                         "+Infinity", "+NaN",     "+nan", "+inf"};

struct Rewritten {
  std::string text;
  // (offset in text, offset in the original) at each replacement, for mapping an error back.
  std::vector<std::pair<std::size_t, std::size_t>> shifts;
  std::size_t replaced = 0;
};

bool is_word_byte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Outside strings, a non-finite token where a value starts (after ':', ',', '[' and spaces)
// becomes null; strings and everything else are copied as they are.
Rewritten rewrite_non_finite(std::string_view in) {
  Rewritten out;
  out.text.reserve(in.size());
  bool in_string = false;
  char last = '\0';  // the last byte outside strings and spaces
  for (std::size_t i = 0; i < in.size();) {
    const char c = in[i];
    if (in_string) {
      out.text += c;
      if (c == '\\' && i + 1 < in.size()) {
        out.text += in[i + 1];
        i += 2;
        continue;
      }
      if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      last = c;
      out.text += c;
      ++i;
      continue;
    }
    if (last == ':' || last == ',' || last == '[') {
      const auto token = std::find_if(kNonFinite.begin(), kNonFinite.end(), [&](auto t) {
        return in.substr(i, t.size()) == t &&
               (i + t.size() == in.size() || !is_word_byte(in[i + t.size()]));
      });
      if (token != kNonFinite.end()) {
        out.text += "null";
        i += token->size();
        out.shifts.emplace_back(out.text.size(), i);
        ++out.replaced;
        last = 'l';
        continue;
      }
    }
    if (std::isspace(static_cast<unsigned char>(c)) == 0) last = c;
    out.text += c;
    ++i;
  }
  return out;
}

std::size_t original_offset(const Rewritten& r, std::size_t offset) {
  // The last replacement that ended at or before the offset fixes the difference.
  const auto after =
      std::upper_bound(r.shifts.begin(), r.shifts.end(), offset,
                       [](std::size_t value, const std::pair<std::size_t, std::size_t>& s) {
                         return value < s.first;
                       });
  if (after == r.shifts.begin()) return offset;
  const auto& [in_text, in_original] = *std::prev(after);
  return in_original + (offset - in_text);
}

// Builds the document as the parser reads it, so that what was whole before a failure is kept.
// Its own stack, not recursion: a deeply nested input costs memory, not the call stack.
class SalvagingSax {
 public:
  json root;
  std::size_t whole = 0;
  std::string current_name;  // "name" of the benchmark entry being read
  std::size_t error_position = 0;
  std::string error;
  bool failed = false;

  bool null() { return value(json(nullptr)); }
  bool boolean(bool v) { return value(json(v)); }
  bool number_integer(json::number_integer_t v) { return value(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return value(json(v)); }
  bool string(json::string_t& v) {
    if (in_entry() && stack_.size() == 3 && key_ == "name") current_name = v;
    return value(json(std::move(v)));
  }
  bool binary(json::binary_t& v) { return value(json::binary(std::move(v))); }
  bool start_object(std::size_t) {
    json* made = open(json::object());
    if (in_benchmarks() && stack_.size() == 2) current_name.clear();
    stack_.push_back(made);
    return true;
  }
  bool key(json::string_t& k) {
    key_ = std::move(k);
    if (stack_.size() == 1) top_key_ = key_;
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    if (in_benchmarks() && stack_.size() == 2) ++whole;
    return true;
  }
  bool start_array(std::size_t) {
    stack_.push_back(open(json::array()));
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    failed = true;
    error_position = position;
    error = e.what();
    return false;
  }

  // Whether the failure fell inside an entry of "benchmarks" (which is then not whole).
  bool failed_inside_entry() const { return in_benchmarks() && stack_.size() >= 3; }
  // Drops the entry the failure fell inside, and anything else left open above the top level.
  void drop_partial_entry() {
    if (failed_inside_entry()) root["benchmarks"].erase(root["benchmarks"].size() - 1);
  }

 private:
  std::vector<json*> stack_;
  std::string key_, top_key_;

  bool in_benchmarks() const {
    return stack_.size() >= 2 && top_key_ == "benchmarks" && stack_[1]->is_array();
  }
  bool in_entry() const { return in_benchmarks() && stack_.size() >= 3; }

  // Places a value in the container on top (or as the root) and returns where it lives. Objects
  // are std::map nodes and an array grows only while none of its elements is open: the pointers
  // on the stack stay valid.
  json* open(json v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool value(json v) {
    open(std::move(v));
    return true;
  }
};

}  // namespace

BenchJson parse_bench_json(std::string_view text) {
  const Rewritten rewritten = rewrite_non_finite(text);
  SalvagingSax sax;
  BenchJson out;
  out.non_finite = rewritten.replaced;
  json::sax_parse(rewritten.text, &sax);
  if (sax.failed) {
    out.complete = false;
    out.error = sax.error;
    // The parser's position counts the byte it failed on (or the end, read as one more byte):
    // the failure's offset is the byte before, at most the end.
    const std::size_t at = std::min(sax.error_position, rewritten.text.size() + 1);
    out.offset = std::min(original_offset(rewritten, at > 0 ? at - 1 : 0), text.size());
    if (sax.failed_inside_entry()) out.inside = sax.current_name;
    sax.drop_partial_entry();
  }
  out.whole = sax.whole;
  out.doc = std::move(sax.root);
  return out;
}

std::vector<std::string> missing_values(const json& doc) {
  std::vector<std::string> out;
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array()) return out;
  for (const json& b : doc["benchmarks"]) {
    if (!b.is_object()) continue;
    const std::string name =
        b.contains("name") && b["name"].is_string() ? b["name"].get<std::string>() : "?";
    for (const auto& [field, value] : b.items()) {
      if (value.is_null()) out.push_back(name + ": " + field);
    }
  }
  return out;
}

}  // namespace cplab::perf
