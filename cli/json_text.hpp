#pragma once
// JSON written straight to text, byte for byte as nlohmann::ordered_json::dump() writes it, for the
// answers whose size grows with the row (`cplab layout --json` lists every token of every rank:
// 270 MB at 16M tokens). A json value per token cost about 40 bytes of memory and most of the time;
// here integers go to the output buffer directly, and the small fields still go through nlohmann
// (its number and string formatting, its UTF-8 checks) so the text stays the same.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace cplab::cli {

// `[v0,v1,...]` appended to out; with `through`, `[through[v0],through[v1],...]` (a rank's view
// of a per-slot column: its positions, its document ids).
void append_json_ints(std::string& out, const std::vector<std::int64_t>& values);
template <class T>
void append_json_ints_through(std::string& out, const std::vector<std::int64_t>& slots,
                              const std::vector<T>& through);

// An object's fields in the order they were first set, each already JSON text; setting a key again
// replaces its value in place, as ordered_json's operator[] does.
class JsonObjectText {
 public:
  void set_text(const std::string& key, std::string value_text);
  template <class T>
  void set(const std::string& key, const T& value) {
    set_text(key, nlohmann::ordered_json(value).dump());
  }
  void append_to(std::string& out) const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// out written to stdout in one call; a short write is a cplab::Error.
void write_stdout(const std::string& out);

}  // namespace cplab::cli
