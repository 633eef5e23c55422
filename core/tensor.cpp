#include "core/tensor.hpp"

#include <fmt/ranges.h>

#include <cstring>

namespace cplab {

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) {
    CPLAB_CHECK(s >= 0, "negative dimension in shape {}", fmt::format("{}", shape));
    CPLAB_CHECK(!__builtin_mul_overflow(n, s, &n), "shape {} has more elements than 2^63",
                fmt::format("{}", shape));
  }
  return n;
}

namespace {

std::size_t byte_count(std::int64_t numel, DType dtype) {
  std::size_t bytes = 0;
  CPLAB_CHECK(!__builtin_mul_overflow(static_cast<std::size_t>(numel), dtype_size(dtype), &bytes),
              "a {} tensor of {} elements has more bytes than 2^64", dtype_name(dtype), numel);
  return bytes;
}

}  // namespace

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype),
      shape_(std::move(shape)),
      numel_(shape_numel(shape_)),
      bytes_(byte_count(numel_, dtype)) {
  if (!bytes_.empty()) std::memset(bytes_.data(), 0, bytes_.size());
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_),
      shape_(other.shape_),
      numel_(other.numel_),
      bytes_(other.bytes_.size()) {
  if (!bytes_.empty()) std::memcpy(bytes_.data(), other.bytes_.data(), bytes_.size());
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}

Tensor::Tensor(DType dtype, Shape shape, Uninitialized)
    : dtype_(dtype),
      shape_(std::move(shape)),
      numel_(shape_numel(shape_)),
      bytes_(byte_count(numel_, dtype)) {}

Tensor Tensor::from_bools(Shape shape, const std::vector<bool>& values) {
  Tensor t(DType::b8, std::move(shape));
  CPLAB_CHECK(static_cast<std::int64_t>(values.size()) == t.numel(),
              "Tensor::from_bools: {} values for shape {}", values.size(), shape_str(t.shape()));
  auto d = t.data<bool>();
  for (std::size_t i = 0; i < values.size(); ++i) d[i] = values[i];
  return t;
}

std::int64_t Tensor::size(std::int64_t d) const {
  const std::int64_t n = dim();
  if (d < 0) d += n;
  CPLAB_CHECK(d >= 0 && d < n, "dimension {} out of range for shape {}", d, shape_str(shape_));
  return shape_[static_cast<std::size_t>(d)];
}

void Tensor::check_dtype(DType want) const {
  CPLAB_CHECK(want == dtype_, "tensor holds {}, accessed as {}", dtype_name(dtype_),
              dtype_name(want));
}

double Tensor::get(std::int64_t flat) const {
  return visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return to_double(reinterpret_cast<const T*>(bytes_.data())[flat]);
  });
}

void Tensor::set(std::int64_t flat, double v) {
  visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reinterpret_cast<T*>(bytes_.data())[flat] = from_double<T>(v);
  });
}

Tensor Tensor::to(DType t) const {
  if (t == dtype_) return *this;
  Tensor out(t, shape_, Uninitialized{});
  visit_dtype(dtype_, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(t, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const auto* src = reinterpret_cast<const From*>(bytes_.data());
      auto* dst = reinterpret_cast<To*>(out.bytes_.data());
      for (std::int64_t i = 0; i < numel_; ++i) dst[i] = from_double<To>(to_double(src[i]));
    });
  });
  return out;
}

namespace {

template <typename Out>
void read_values(const Tensor& t, std::int64_t first, std::span<Out> out) {
  const auto n = static_cast<std::int64_t>(out.size());
  CPLAB_CHECK(first >= 0 && first <= t.numel() - n, "reading {} values at {} of {}", n, first,
              tensor_brief(t));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* from = t.data<T>().data() + first;
    for (std::int64_t i = 0; i < n; ++i)
      out[static_cast<std::size_t>(i)] = static_cast<Out>(to_double(from[i]));
  });
}

}  // namespace

void Tensor::read(std::int64_t first, std::span<double> out) const {
  read_values(*this, first, out);
}
void Tensor::read(std::int64_t first, std::span<float> out) const {
  read_values(*this, first, out);
}

void Tensor::write(std::int64_t first, std::span<const float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  CPLAB_CHECK(first >= 0 && first <= numel_ - n, "writing {} values at {} of {}", n, first,
              tensor_brief(*this));
  visit_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* to = reinterpret_cast<T*>(bytes_.data()) + first;
    for (std::int64_t i = 0; i < n; ++i)
      to[i] = from_double<T>(values[static_cast<std::size_t>(i)]);
  });
}

Tensor Tensor::reshaped(Shape shape) const {
  CPLAB_CHECK(shape_numel(shape) == numel(), "cannot reshape {} to {}", shape_str(shape_),
              shape_str(shape));
  Tensor out = *this;
  out.shape_ = std::move(shape);
  return out;
}

bool Tensor::operator==(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ && bytes_ == other.bytes_;
}

std::string tensor_brief(const Tensor& t) {
  return fmt::format("{}{}", dtype_name(t.dtype()), shape_str(t.shape()));
}

}  // namespace cplab
