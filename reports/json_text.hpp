#pragma once
// JSON written straight to text, byte for byte as nlohmann::ordered_json::dump() writes it, for the
// answers whose size grows with the row (`cplab layout --json` lists every token of every rank:
// 270 MB at 16M tokens; `cplab schedule --json` every slot range of every block). A json value per
// token cost about 40 bytes of memory and most of the time; here integers go to a small output
// buffer directly, and the small fields still go through nlohmann (its number and string
// formatting, its UTF-8 checks) so the text stays the same.
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cplab::reports {

// Where the text goes: a FILE or a stream (flushed each time a megabyte has gathered, so the answer
// is never held whole) or, with neither, a string that keeps it all (tests). A short write to a
// FILE is an error here; a stream's state is its owner's to check (write_output_file does).
class JsonSink {
 public:
  explicit JsonSink(std::FILE* file = nullptr) : file_(file) {}
  explicit JsonSink(std::ostream& stream) : stream_(&stream) {}
  JsonSink(const JsonSink&) = delete;
  JsonSink& operator=(const JsonSink&) = delete;

  void put(std::string_view text);
  void put(char c);
  // fmt's formatting straight into the buffer (the many small numbers of a long answer).
  template <typename... T>
  void format(fmt::format_string<T...> f, T&&... args) {
    fmt::format_to(std::back_inserter(buffer_), f, std::forward<T>(args)...);
    flush_if_full();
  }
  // An object's members without its closing brace, so that more members can follow.
  void open_object(const nlohmann::ordered_json& head);
  // `[v0,v1,...]`; with `through`, `[through[v0],through[v1],...]` (a rank's view of a per-slot
  // column: its positions, its document ids).
  void ints(const std::vector<std::int64_t>& values);
  template <class T>
  void ints_through(const std::vector<std::int64_t>& slots, const std::vector<T>& through);
  // The rest written out (a short write is a cplab::Error); text() is what a string sink holds.
  void finish();
  const std::string& text() const { return buffer_; }

 private:
  void flush_if_full();
  void write_buffer();
  std::FILE* file_ = nullptr;
  std::ostream* stream_ = nullptr;
  std::string buffer_;
};

// An object's fields in the order they were first set; setting a key again replaces its value in
// place, as ordered_json's operator[] does. A value is JSON text, or a writer called when the
// object is written (the per-token lists: written once, into the sink, never held as a value).
class JsonObjectText {
 public:
  using Writer = std::function<void(JsonSink&)>;
  void set_text(const std::string& key, std::string value_text);
  void set_writer(const std::string& key, Writer writer);
  template <class T>
  void set(const std::string& key, const T& value) {
    set_text(key, nlohmann::ordered_json(value).dump());
  }
  void write(JsonSink& out) const;

 private:
  struct Field {
    std::string key, text;
    Writer writer;  // when set, text is unused
  };
  Field& field(const std::string& key);
  std::vector<Field> fields_;
};

}  // namespace cplab::reports
