// Named tensors of a torch.save file (torch_tensors.hpp). Narrow libtorch headers only.
#include "io/torch_tensors.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>
#include <fstream>

#include "io/torch_archive.hpp"
#include "reference/types/error.hpp"

namespace cplab::io {
namespace {

DType dtype_from(at::ScalarType t, const std::string& key) {
  switch (t) {
    case at::kFloat:
      return DType::f32;
    case at::kBFloat16:
      return DType::bf16;
    case at::kHalf:
      return DType::f16;
    case at::kLong:
      return DType::i64;
    case at::kInt:
      return DType::i32;
    case at::kByte:
      return DType::u8;
    case at::kBool:
      return DType::b8;
    default:
      CPLAB_FAIL(
          "'{}' has dtype {}; supported: float32, bfloat16, float16, int64, int32, uint8, "
          "bool",
          key, c10::toString(t));
  }
}

at::ScalarType dtype_to(DType t) {
  switch (t) {
    case DType::f32:
      return at::kFloat;
    case DType::bf16:
      return at::kBFloat16;
    case DType::f16:
      return at::kHalf;
    case DType::i64:
      return at::kLong;
    case DType::i32:
      return at::kInt;
    case DType::u8:
      return at::kByte;
    case DType::b8:
      return at::kBool;
  }
  CPLAB_FAIL("unsupported dtype {}", static_cast<int>(t));
}

Tensor tensor_from(const detail::CheckedArchive& archive, const at::Tensor& value,
                   const std::string& key) {
  archive.check_readable(value, key);  // its view inside the bytes the file really holds
  const at::Tensor c = value.contiguous();
  Tensor out(dtype_from(c.scalar_type(), key), Shape(c.sizes().begin(), c.sizes().end()));
  if (out.nbytes() > 0) std::memcpy(out.raw(), c.data_ptr(), out.nbytes());
  return out;
}

void add_entries(const detail::CheckedArchive& archive, TensorFile& file,
                 const c10::Dict<c10::IValue, c10::IValue>& dict, const std::string& outer,
                 const std::string& path) {
  for (const auto& entry : dict) {
    CPLAB_CHECK(entry.key().isString(), "'{}': dict keys must be strings", path);
    const std::string own = entry.key().toStringRef();
    std::string name = own;
    if (!outer.empty() && file.tensors.count(own) != 0) name = outer + "." + own;
    const c10::IValue& value = entry.value();
    if (value.isTensor()) {
      file.tensors[name] = tensor_from(archive, value.toTensor(), name);
    } else if (value.isGenericDict() && outer.empty()) {
      add_entries(archive, file, value.toGenericDict(), own, path);
    } else {
      file.skipped[name] = value.tagKind();
    }
  }
}

}  // namespace

TensorFile load_torch_tensors(const std::string& path) {
  return detail::guard_torch_errors(path, [&] {
    const detail::CheckedArchive archive(detail::read_file_bytes(path, ""));
    const c10::IValue& root = archive.root();
    TensorFile file;
    if (root.isTensor()) {
      file.tensors[""] = tensor_from(archive, root.toTensor(), path);
      return file;
    }
    CPLAB_CHECK(root.isGenericDict(), "'{}' holds a {}, not a tensor or a dict of tensors", path,
                root.tagKind());
    add_entries(archive, file, root.toGenericDict(), "", path);
    return file;
  });
}

void save_torch_tensors(const std::map<std::string, Tensor>& tensors, const std::string& path) {
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [name, t] : tensors) {
    at::Tensor value = at::empty(std::vector<int64_t>(t.shape().begin(), t.shape().end()),
                                 at::TensorOptions().dtype(dtype_to(t.dtype())));
    if (t.nbytes() > 0) std::memcpy(value.data_ptr(), t.raw(), t.nbytes());
    root.insert(name, value);
  }
  const std::vector<char> bytes = torch::jit::pickle_save(root);
  std::ofstream out(path, std::ios::binary);
  CPLAB_CHECK(out.good(), "cannot write '{}'", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CPLAB_CHECK(out.good(), "short write to '{}'", path);
}

}  // namespace cplab::io
