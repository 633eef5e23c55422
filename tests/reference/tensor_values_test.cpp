// Tensor::read and Tensor::write convert a run of elements in one typed pass: the same values as
// get and set element by element, in every dtype, and a run outside the tensor is an error.
#include <gtest/gtest.h>

#include <vector>

#include "core/tensor.hpp"
#include "tests/support/fixtures.hpp"

namespace cplab {
namespace {

TEST(TensorValues, read_and_write_equal_get_and_set_in_every_dtype) {
  for (DType dtype :
       {DType::f32, DType::bf16, DType::f16, DType::i64, DType::i32, DType::u8, DType::b8}) {
    Tensor t(dtype, {2, 5});
    for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(3 * i + 1) / 4.0);
    std::vector<double> as_double(4);
    std::vector<float> as_float(4);
    t.read(3, as_double);
    t.read(3, as_float);
    for (std::int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(as_double[static_cast<std::size_t>(i)], t.get(3 + i)) << dtype_name(dtype);
      EXPECT_EQ(as_float[static_cast<std::size_t>(i)], static_cast<float>(t.get(3 + i)));
    }
    Tensor u(dtype, {2, 5}), w(dtype, {2, 5});
    const std::vector<float> values = {0.3f, -1.7f, 250.5f, 2.0f};
    u.write(6, values);
    for (std::size_t i = 0; i < values.size(); ++i)
      w.set(6 + static_cast<std::int64_t>(i), values[i]);
    EXPECT_EQ(u, w) << dtype_name(dtype);
  }
}

TEST(TensorValues, a_run_outside_the_tensor_is_an_error) {
  Tensor t(DType::f32, {2, 5});
  std::vector<double> four(4);
  EXPECT_ERROR(t.read(7, four), "reading 4 values at 7 of f32[2, 5]");
  EXPECT_ERROR(t.read(-1, four), "reading 4 values at -1");
  const std::vector<float> three(3);
  EXPECT_ERROR(t.write(8, three), "writing 3 values at 8 of f32[2, 5]");
}

}  // namespace
}  // namespace cplab
