#include "gpu/impl/token_ops.hpp"

#include "core/error.hpp"
#include "gpu/host/copy_plan.hpp"

namespace cplab::gpu {

DeviceBuffer upload_tensor(const Tensor& t, Stream stream) {
  DeviceBuffer buffer(t.nbytes());
  buffer.upload(t.raw(), t.nbytes(), stream);
  return buffer;
}

Tensor download_tensor(const DeviceBuffer& buffer, DType dtype, Shape shape, Stream stream) {
  Tensor t(dtype, std::move(shape));
  CPLAB_CHECK(t.nbytes() <= buffer.bytes(), "gpu: {} needs {} bytes, the device buffer holds {}",
              tensor_brief(t), t.nbytes(), buffer.bytes());
  buffer.download(t.raw(), t.nbytes(), stream);
  return t;
}

std::array<std::uint8_t, 16> fill_of(DType dtype, double value) {
  Tensor one(dtype, {1});
  one.set(0, value);
  return fill_pattern(one.raw(), static_cast<std::int64_t>(dtype_size(dtype)));
}

DeviceBuffer upload_rows(const std::vector<std::vector<std::int64_t>>& rows, Stream stream) {
  std::vector<std::int64_t> flat;
  for (const auto& row : rows) {
    CPLAB_CHECK(row.size() == rows[0].size(), "gpu: per-row maps of {} and {} entries",
                rows[0].size(), row.size());
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return upload_vector(flat, stream);
}

Shape token_shape(const Tensor& t, std::int64_t seq_dim, std::int64_t rows, std::int64_t seq) {
  Shape shape = t.shape();
  shape[static_cast<std::size_t>(seq_dim - 1)] = rows;
  shape[static_cast<std::size_t>(seq_dim)] = seq;
  return shape;
}

TokenCopy token_copy(const TokenAxes& axes) {
  TokenCopy c;
  c.outer = axes.outer;
  c.rows = axes.rows;
  c.src_rows = axes.rows;
  c.token_bytes = static_cast<std::int64_t>(axes.token_bytes());
  c.element_bytes = static_cast<std::int64_t>(axes.elem);
  return c;
}

void check_sources(const ErrorSlot& bad, Stream stream, const char* verb) {
  const std::int64_t first = bad.first_bad(stream);
  CPLAB_CHECK(first < 0, "gpu {}: destination token {} was given a source index outside its tensor",
              verb, first);
}

}  // namespace cplab::gpu
