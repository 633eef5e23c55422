#include "cli/json_text.hpp"

#include <charconv>
#include <cstdio>

#include "reference/types/error.hpp"

namespace cplab::cli {
namespace {

// Room for one integer and its comma, so the buffer grows once per call, not per value.
constexpr std::size_t kIntChars = 21;

inline char* put_int(char* at, std::int64_t value) {
  return std::to_chars(at, at + kIntChars, value).ptr;
}

}  // namespace

void append_json_ints(std::string& out, const std::vector<std::int64_t>& values) {
  const std::size_t start = out.size();
  out.resize(start + 2 + values.size() * kIntChars);
  char* at = out.data() + start;
  *at++ = '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) *at++ = ',';
    at = put_int(at, values[i]);
  }
  *at++ = ']';
  out.resize(static_cast<std::size_t>(at - out.data()));
}

template <class T>
void append_json_ints_through(std::string& out, const std::vector<std::int64_t>& slots,
                              const std::vector<T>& through) {
  const std::size_t start = out.size();
  out.resize(start + 2 + slots.size() * kIntChars);
  char* at = out.data() + start;
  *at++ = '[';
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (i != 0) *at++ = ',';
    at = put_int(at, static_cast<std::int64_t>(through[static_cast<std::size_t>(slots[i])]));
  }
  *at++ = ']';
  out.resize(static_cast<std::size_t>(at - out.data()));
}

template void append_json_ints_through(std::string&, const std::vector<std::int64_t>&,
                                       const std::vector<std::int64_t>&);
template void append_json_ints_through(std::string&, const std::vector<std::int64_t>&,
                                       const std::vector<std::int32_t>&);

void JsonObjectText::set_text(const std::string& key, std::string value_text) {
  for (auto& [name, text] : fields_) {
    if (name == key) {
      text = std::move(value_text);
      return;
    }
  }
  fields_.emplace_back(key, std::move(value_text));
}

void JsonObjectText::append_to(std::string& out) const {
  out += '{';
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i != 0) out += ',';
    out += nlohmann::ordered_json(fields_[i].first).dump();
    out += ':';
    out += fields_[i].second;
  }
  out += '}';
}

void write_stdout(const std::string& out) {
  std::fflush(stdout);
  const std::size_t written = std::fwrite(out.data(), 1, out.size(), stdout);
  CPLAB_CHECK(written == out.size() && std::fflush(stdout) == 0,
              "short write to stdout ({} of {} bytes)", written, out.size());
}

}  // namespace cplab::cli
