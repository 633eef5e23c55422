#pragma once
// What one rank computed, as bytes: when ranks are processes (sim-mpi), each rank's result of a
// property's C-rank computation travels to every process, which then checks all of them exactly
// as if the ranks had been threads. Lossless (tensors and doubles bit for bit).
//
// encode/decode are found by argument-dependent lookup: a type of a check's own (a struct of
// tensors, say) adds its pair beside it.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "core/shard_layout.hpp"
#include "core/tensor.hpp"
#include "implementation/implementation.hpp"

namespace cplab::properties::wire {

class Writer {
 public:
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    out_.append(p, n);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  void bytes(void* data, std::size_t n) {
    CPLAB_CHECK(n <= in_.size() - at_,
                "a rank's result ends early ({} of {} bytes read, {} more wanted)", at_, in_.size(),
                n);
    if (n) std::memcpy(data, in_.data() + at_, n);
    at_ += n;
  }
  void finish() const {
    CPLAB_CHECK(at_ == in_.size(), "a rank's result has {} bytes left over", in_.size() - at_);
  }

 private:
  const std::string& in_;
  std::size_t at_ = 0;
};

template <typename T>
requires(std::is_arithmetic_v<T> || std::is_enum_v<T>) void encode(Writer& w, const T& v) {
  w.bytes(&v, sizeof v);
}
template <typename T>
requires(std::is_arithmetic_v<T> || std::is_enum_v<T>) void decode(Reader& r, T& v) {
  r.bytes(&v, sizeof v);
}

void encode(Writer& w, const std::string& s);
void decode(Reader& r, std::string& s);
void encode(Writer& w, const Tensor& t);
void decode(Reader& r, Tensor& t);
void encode(Writer& w, const TokenField& f);
void decode(Reader& r, TokenField& f);
void encode(Writer& w, const Batch& b);
void decode(Reader& r, Batch& b);
void encode(Writer& w, const MapParams& m);
void decode(Reader& r, MapParams& m);
void encode(Writer& w, const ShardLayout& l);
void decode(Reader& r, ShardLayout& l);
void encode(Writer& w, const VarlenSegments& v);
void decode(Reader& r, VarlenSegments& v);
void encode(Writer& w, const RankShard& s);
void decode(Reader& r, RankShard& s);
void encode(Writer& w, const LossOutput& o);
void decode(Reader& r, LossOutput& o);
void encode(Writer& w, const AttentionOutput& o);
void decode(Reader& r, AttentionOutput& o);
void encode(Writer& w, const CpAttentionOutput& o);
void decode(Reader& r, CpAttentionOutput& o);

template <typename T>
void encode(Writer& w, const std::vector<T>& v) {
  encode(w, static_cast<std::uint64_t>(v.size()));
  for (const T& x : v) encode(w, x);
}
template <typename T>
void decode(Reader& r, std::vector<T>& v) {
  std::uint64_t n = 0;
  decode(r, n);
  v.clear();
  v.resize(static_cast<std::size_t>(n));
  for (T& x : v) decode(r, x);
}
// std::vector<bool> has no references to its elements.
void encode(Writer& w, const std::vector<bool>& v);
void decode(Reader& r, std::vector<bool>& v);

template <typename V>
void encode(Writer& w, const std::map<std::string, V>& m) {
  encode(w, static_cast<std::uint64_t>(m.size()));
  for (const auto& [key, value] : m) {
    encode(w, key);
    encode(w, value);
  }
}
template <typename V>
void decode(Reader& r, std::map<std::string, V>& m) {
  std::uint64_t n = 0;
  decode(r, n);
  m.clear();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string key;
    decode(r, key);
    decode(r, m[key]);
  }
}

// A value's bytes, and the value back from them (all of them, or an error).
template <typename T>
std::string to_bytes(const T& value) {
  Writer w;
  encode(w, value);
  return w.take();
}
template <typename T>
T from_bytes(const std::string& bytes) {
  Reader r(bytes);
  T value{};
  decode(r, value);
  r.finish();
  return value;
}

}  // namespace cplab::properties::wire
