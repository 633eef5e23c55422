#pragma once
// A small owning host tensor: dtype, shape, contiguous row-major bytes. Plain on purpose: every
// layout moves whole token slices, so nothing here needs strides or views.
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/block_cache.hpp"
#include "core/dtype.hpp"

namespace cplab {

using Shape = std::vector<std::int64_t>;

// An allocator whose value-less construct leaves the element uninitialized: a tensor that is
// about to be overwritten whole skips the zero fill (a whole extra write pass over large tensors).
// Large blocks come from the block cache (block_cache.hpp), so they are reused without page faults.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n * sizeof(T) < block_cache::kMinBytes) return std::allocator<T>::allocate(n);
    return static_cast<T*>(block_cache::acquire(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < block_cache::kMinBytes) return std::allocator<T>::deallocate(p, n);
    block_cache::release(p, n * sizeof(T));
  }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// Tag of the constructor that leaves the bytes unset; the caller writes every one of them.
struct Uninitialized {};

std::int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 16, 8]"

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape);  // zero-filled
  Tensor(DType dtype, Shape shape, Uninitialized);
  // Copies move the bytes with one memcpy (the allocator's per-element construct would copy
  // them one by one).
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  ~Tensor() = default;

  template <typename T>
  static Tensor from(Shape shape, std::span<const T> values) {
    Tensor t(dtype_of<T>(), std::move(shape));
    CPLAB_CHECK(static_cast<std::int64_t>(values.size()) == t.numel(),
                "Tensor::from: {} values for shape {}", values.size(), shape_str(t.shape()));
    std::memcpy(t.bytes_.data(), values.data(), t.bytes_.size());
    return t;
  }
  template <typename T>
  static Tensor from(Shape shape, const std::vector<T>& values) {
    return from<T>(std::move(shape), std::span<const T>(values.data(), values.size()));
  }
  static Tensor from_bools(Shape shape, const std::vector<bool>& values);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim() const { return static_cast<std::int64_t>(shape_.size()); }
  std::int64_t size(std::int64_t d) const;  // negative d counts from the end
  std::int64_t numel() const { return numel_; }
  std::size_t nbytes() const { return bytes_.size(); }
  bool defined() const { return !shape_.empty() || !bytes_.empty(); }

  std::byte* raw() { return bytes_.data(); }
  const std::byte* raw() const { return bytes_.data(); }

  template <typename T>
  std::span<T> data() {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<T*>(bytes_.data()), static_cast<std::size_t>(numel())};
  }
  template <typename T>
  std::span<const T> data() const {
    check_dtype(dtype_of<T>());
    return {reinterpret_cast<const T*>(bytes_.data()), static_cast<std::size_t>(numel())};
  }
  template <typename T>
  std::vector<T> to_vector() const {
    auto d = data<T>();
    return {d.begin(), d.end()};
  }

  // Element i (flat) converted through double, whatever the dtype.
  double get(std::int64_t flat) const;
  void set(std::int64_t flat, double v);
  Tensor to(DType t) const;  // value conversion
  // Elements [first, first + n) converted through double into `out` (n = out.size()), or set
  // from `values`, in one typed pass (get and set switch on the dtype per element).
  void read(std::int64_t first, std::span<double> out) const;
  void read(std::int64_t first, std::span<float> out) const;
  void write(std::int64_t first, std::span<const float> values);
  Tensor reshaped(Shape shape) const;

  bool operator==(const Tensor& other) const;  // same dtype, shape and bytes

 private:
  void check_dtype(DType want) const;

  DType dtype_ = DType::f32;
  Shape shape_;
  std::int64_t numel_ = 1;  // shape_numel(shape_), kept: element loops ask for it every step
  std::vector<std::byte, UninitializedAllocator<std::byte>> bytes_;
};

std::string tensor_brief(const Tensor& t);  // "i64[2, 16]"

}  // namespace cplab
