#include "reports/json_text.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>

#include "core/error.hpp"

namespace cplab::reports {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
constexpr std::size_t kIntChars = 21;  // an int64 and its comma
constexpr std::size_t kIntsPerStep = 4096;

}  // namespace

void JsonSink::put(std::string_view text) {
  buffer_.append(text);
  flush_if_full();
}

void JsonSink::put(char c) { buffer_.push_back(c); }

void JsonSink::open_object(const nlohmann::ordered_json& head) {
  std::string text = head.dump();
  text.pop_back();
  put(text);
}

void JsonSink::write_buffer() {
  if (stream_ != nullptr) {
    stream_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  } else {
    const std::size_t written = std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
    CPLAB_CHECK(written == buffer_.size(), "cannot write the output: {} ({} of {} bytes written)",
                std::strerror(errno), written, buffer_.size());
  }
  buffer_.clear();
}

void JsonSink::flush_if_full() {
  if ((file_ == nullptr && stream_ == nullptr) || buffer_.size() < kFlushBytes) return;
  write_buffer();
}

void JsonSink::finish() {
  if (file_ == nullptr && stream_ == nullptr) return;
  write_buffer();
  if (file_ != nullptr)
    CPLAB_CHECK(std::fflush(file_) == 0, "cannot write the output: {}", std::strerror(errno));
}

template <class T>
void JsonSink::ints_through(const std::vector<std::int64_t>& slots, const std::vector<T>& through) {
  put('[');
  // A step's worth of room at a time: the buffer grows by what is written, not by 21 bytes a value.
  for (std::size_t first = 0; first < slots.size(); first += kIntsPerStep) {
    const std::size_t last = std::min(slots.size(), first + kIntsPerStep);
    const std::size_t start = buffer_.size();
    buffer_.resize(start + (last - first) * kIntChars);
    char* at = buffer_.data() + start;
    for (std::size_t i = first; i < last; ++i) {
      if (i != 0) *at++ = ',';
      const std::int64_t v = static_cast<std::int64_t>(through[static_cast<std::size_t>(slots[i])]);
      at = std::to_chars(at, at + kIntChars, v).ptr;
    }
    buffer_.resize(static_cast<std::size_t>(at - buffer_.data()));
    flush_if_full();
  }
  put(']');
}

template void JsonSink::ints_through(const std::vector<std::int64_t>&,
                                     const std::vector<std::int64_t>&);
template void JsonSink::ints_through(const std::vector<std::int64_t>&,
                                     const std::vector<std::int32_t>&);

void JsonSink::ints(const std::vector<std::int64_t>& values) {
  put('[');
  for (std::size_t first = 0; first < values.size(); first += kIntsPerStep) {
    const std::size_t last = std::min(values.size(), first + kIntsPerStep);
    const std::size_t start = buffer_.size();
    buffer_.resize(start + (last - first) * kIntChars);
    char* at = buffer_.data() + start;
    for (std::size_t i = first; i < last; ++i) {
      if (i != 0) *at++ = ',';
      at = std::to_chars(at, at + kIntChars, values[i]).ptr;
    }
    buffer_.resize(static_cast<std::size_t>(at - buffer_.data()));
    flush_if_full();
  }
  put(']');
}

JsonObjectText::Field& JsonObjectText::field(const std::string& key) {
  for (Field& f : fields_) {
    if (f.key == key) return f;
  }
  return fields_.emplace_back(Field{key, {}, {}});
}

void JsonObjectText::set_text(const std::string& key, std::string value_text) {
  Field& f = field(key);
  f.text = std::move(value_text);
  f.writer = nullptr;
}

void JsonObjectText::set_writer(const std::string& key, Writer writer) {
  Field& f = field(key);
  f.text.clear();
  f.writer = std::move(writer);
}

void JsonObjectText::write(JsonSink& out) const {
  out.put('{');
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i != 0) out.put(',');
    out.put(nlohmann::ordered_json(fields_[i].key).dump());
    out.put(':');
    if (fields_[i].writer) {
      fields_[i].writer(out);
    } else {
      out.put(fields_[i].text);
    }
  }
  out.put('}');
}

}  // namespace cplab::reports
