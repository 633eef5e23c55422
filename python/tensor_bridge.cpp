// torch tensors in and out through DLPack (torch.utils.dlpack): the module links no libtorch, so
// it loads under whichever torch the user's environment has. Bool tensors, which DLPack 0.6
// cannot carry, cross as uint8 views of the same bytes.
#include "python/tensor_bridge.hpp"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/standard_keys.hpp"

namespace cplab::python {
namespace py = pybind11;

namespace {

constexpr const char* kCapsule = "dltensor";

py::object torch_module() { return py::module_::import("torch"); }

// torch dtype names and cplab's, both ways (bool crosses as uint8: see above).
struct DTypeName {
  const char* torch;
  DType dtype;
  DLDataType dl;
};
constexpr DTypeName kDTypes[] = {
    {"float32", DType::f32, {kDLFloat, 32, 1}}, {"bfloat16", DType::bf16, {kDLBfloat, 16, 1}},
    {"float16", DType::f16, {kDLFloat, 16, 1}}, {"int64", DType::i64, {kDLInt, 64, 1}},
    {"int32", DType::i32, {kDLInt, 32, 1}},     {"uint8", DType::u8, {kDLUInt, 8, 1}},
    {"bool", DType::b8, {kDLUInt, 8, 1}},
};

std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
}

DType dtype_of(py::handle tensor, const std::string& what) {
  std::string name = py::str(tensor.attr("dtype")).cast<std::string>();  // "torch.float32"
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  for (const DTypeName& d : kDTypes) {
    if (name == d.torch) return d.dtype;
  }
  CPLAB_FAIL(
      "{} has dtype torch.{}; cplab holds float32, bfloat16, float16, int64, int32, uint8 and "
      "bool (convert it with .to(...))",
      what, name);
}

const DTypeName& name_of(DType dtype) {
  for (const DTypeName& d : kDTypes) {
    if (d.dtype == dtype) return d;
  }
  CPLAB_FAIL("no torch dtype for cplab's {}", dtype_name(dtype));
}

// Copies `src` (any strides, in elements; none: compact) into the compact `out`.
void copy_strided(const DLTensor& src, Tensor& out) {
  const std::size_t elem = dtype_size(out.dtype());
  const auto* base = static_cast<const std::byte*>(src.data) + src.byte_offset;
  const int n = src.ndim;
  bool compact = src.strides == nullptr;
  if (!compact) {
    compact = true;
    std::int64_t want = 1;
    for (int i = n - 1; i >= 0; --i) {
      if (src.shape[i] != 1 && src.strides[i] != want) compact = false;
      want *= src.shape[i];
    }
  }
  if (compact) {
    std::memcpy(out.raw(), base, out.nbytes());
    return;
  }
  // An odometer over every dimension but the last, the last copied element by element.
  std::vector<std::int64_t> at(static_cast<std::size_t>(n), 0);
  const std::int64_t inner = n == 0 ? 1 : src.shape[n - 1];
  const std::int64_t step = n == 0 ? 0 : src.strides[n - 1];
  std::byte* dst = out.raw();
  const std::int64_t rows = inner == 0 ? 0 : out.numel() / inner;
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t offset = 0;
    for (int i = 0; i + 1 < n; ++i) offset += at[static_cast<std::size_t>(i)] * src.strides[i];
    for (std::int64_t j = 0; j < inner; ++j, dst += elem)
      std::memcpy(dst, base + (offset + j * step) * static_cast<std::int64_t>(elem), elem);
    for (int i = n - 2; i >= 0; --i) {
      if (++at[static_cast<std::size_t>(i)] < src.shape[i]) break;
      at[static_cast<std::size_t>(i)] = 0;
    }
  }
}

// What a result's capsule owns: the tensor's bytes and the shape DLPack points at.
struct Exported {
  Tensor tensor;
  std::vector<std::int64_t> shape;
  DLManagedTensor managed{};
};

void delete_exported(DLManagedTensor* managed) {
  delete static_cast<Exported*>(managed->manager_ctx);
}

// A capsule torch never took (an error before from_dlpack consumed it) frees its tensor.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsule) == 0) return;  // consumed: torch owns it now
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

std::string key_text(py::handle key, const std::string& what) {
  CPLAB_CHECK(py::isinstance<py::str>(key), "{}: keys must be strings, found a {}", what,
              type_name(key));
  return key.cast<std::string>();
}
// [B, n] (or [n] for one row) with any negative value past a row's last document.
std::vector<std::vector<std::int64_t>> lengths_from(const Tensor& t, const std::string& key) {
  CPLAB_CHECK(t.dtype() == DType::i64 || t.dtype() == DType::i32,
              "'{}' must hold int64 or int32 lengths, found {}", key, tensor_brief(t));
  CPLAB_CHECK(t.dim() == 1 || t.dim() == 2, "'{}' must be [B, n] or [n], found {}", key,
              tensor_brief(t));
  const std::int64_t rows = t.dim() == 1 ? 1 : t.size(0);
  const std::int64_t width = t.dim() == 1 ? t.size(0) : t.size(1);
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(rows));
  for (std::int64_t b = 0; b < rows; ++b) {
    bool ended = false;
    for (std::int64_t i = 0; i < width; ++i) {
      const auto n = static_cast<std::int64_t>(t.get(b * width + i));
      if (n < 0) {
        ended = true;
        continue;
      }
      CPLAB_CHECK(!ended,
                  "'{}' row {}: length {} at document {} after a negative end marker (negative "
                  "values only after the last document)",
                  key, b, n, i);
      out[static_cast<std::size_t>(b)].push_back(n);
    }
  }
  return out;
}

Tensor lengths_to(const std::vector<std::vector<std::int64_t>>& rows) {
  std::size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  std::vector<std::int64_t> flat(rows.size() * width, -1);
  for (std::size_t b = 0; b < rows.size(); ++b) {
    for (std::size_t i = 0; i < rows[b].size(); ++i) flat[b * width + i] = rows[b][i];
  }
  return Tensor::from<std::int64_t>(
      {static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)}, flat);
}

py::dict as_dict(py::handle obj, const std::string& what) {
  CPLAB_CHECK(py::isinstance<py::dict>(obj), "{} must be a dict of tensors, found a {}", what,
              type_name(obj));
  return py::reinterpret_borrow<py::dict>(obj);
}

}  // namespace

bool is_tensor(py::handle obj) { return py::isinstance(obj, torch_module().attr("Tensor")); }

Tensor tensor_from_torch(py::handle obj, const std::string& what) {
  CPLAB_CHECK(is_tensor(obj), "{} is a {}, not a torch.Tensor", what, type_name(obj));
  py::object src = py::reinterpret_borrow<py::object>(obj);
  const py::object torch = torch_module();
  CPLAB_CHECK(
      src.attr("layout").is(torch.attr("strided")) && !src.attr("is_quantized").cast<bool>(),
      "{} is not a dense tensor (layout {}); pass .to_dense()", what,
      py::str(src.attr("layout")).cast<std::string>());
  const std::string device = py::str(src.attr("device")).cast<std::string>();
  CPLAB_CHECK(src.attr("device").attr("type").cast<std::string>() == "cpu",
              "{} is on {}; cplab reads CPU tensors (pass .cpu()): it copies nothing from a "
              "device itself",
              what, device);
  const auto dims = src.attr("dim")().cast<std::int64_t>();
  CPLAB_CHECK(dims <= 64, "{} has {} dimensions (at most 64)", what, dims);
  const DType dtype = dtype_of(src, what);
  Shape shape;
  for (py::handle n : src.attr("shape")) shape.push_back(n.cast<std::int64_t>());
  Tensor out(dtype, std::move(shape), Uninitialized{});
  if (out.nbytes() == 0) return out;
  // Autograd's view detached first, bool as uint8.
  src = src.attr("detach")();
  // Both lazy bits resolved (DLPack exports neither: a negative view would lose its sign).
  src = src.attr("resolve_conj")().attr("resolve_neg")();
  if (dtype == DType::b8) src = src.attr("view")(torch.attr("uint8"));
  const py::object capsule = src.attr("__dlpack__")();
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsule));
  CPLAB_CHECK(managed != nullptr, "{}: torch gave no DLPack tensor", what);
  const DLTensor& dl = managed->dl_tensor;
  CPLAB_CHECK(dl.ndim == static_cast<int>(out.dim()) && dl.dtype.bits == name_of(dtype).dl.bits &&
                  dl.dtype.lanes == 1,
              "{}: torch's DLPack export disagrees with its shape or dtype", what);
  copy_strided(dl, out);  // the one copy; the capsule's destructor hands torch its tensor back
  return out;
}

py::object tensor_to_torch(Tensor tensor) {
  const DType dtype = tensor.dtype();
  auto owner = std::make_unique<Exported>();
  owner->shape.assign(tensor.shape().begin(), tensor.shape().end());
  owner->tensor = std::move(tensor);
  DLManagedTensor& m = owner->managed;
  m.dl_tensor.data = owner->tensor.nbytes() == 0 ? nullptr : owner->tensor.raw();
  m.dl_tensor.device = {kDLCPU, 0};
  m.dl_tensor.ndim = static_cast<int>(owner->shape.size());
  m.dl_tensor.dtype = name_of(dtype).dl;
  m.dl_tensor.shape = owner->shape.data();
  m.dl_tensor.strides = nullptr;  // compact
  m.dl_tensor.byte_offset = 0;
  m.manager_ctx = owner.get();
  m.deleter = delete_exported;
  PyObject* raw = PyCapsule_New(&m, kCapsule, capsule_destructor);
  if (raw == nullptr) throw py::error_already_set();
  owner.release();  // the capsule (then torch) owns it
  const py::object capsule = py::reinterpret_steal<py::object>(raw);
  py::object out = py::module_::import("torch.utils.dlpack").attr("from_dlpack")(capsule);
  if (dtype == DType::b8) out = out.attr("view")(torch_module().attr("bool"));
  return out;
}

py::object int64s_to_torch(const std::vector<std::int64_t>& values, const Shape& shape) {
  return tensor_to_torch(Tensor::from<std::int64_t>(shape, values));
}

Batch batch_from_dict(py::handle obj, const std::string& what) {
  Batch batch;
  for (const auto& [key_obj, value] : as_dict(obj, what)) {
    const std::string key = key_text(key_obj, what);
    const std::string where = fmt::format("{}['{}']", what, key);
    if (key == "extra_tokens" || key == "passthrough") {
      for (const auto& [inner_obj, inner] : as_dict(value, where)) {
        const std::string name = key_text(inner_obj, where);
        Tensor t = tensor_from_torch(inner, fmt::format("{}['{}']", where, name));
        if (key == "passthrough") {
          batch.passthrough[name] = std::move(t);
        } else {
          batch.tokens[name] = TokenField{std::move(t), 1, PadRule::constant, 0.0};
        }
      }
    } else if (key == "seq_lens") {
      batch.seq_lens = lengths_from(tensor_from_torch(value, where), key);
    } else if (key == "seq_lens_padded") {
      batch.seq_lens_padded = lengths_from(tensor_from_torch(value, where), key);
    } else {
      Tensor t = tensor_from_torch(value, where);
      check_standard_key(key, t);
      batch.add(key, std::move(t));
    }
  }
  validate_batch(batch);
  return batch;
}

py::dict batch_to_dict(Batch batch) {
  py::dict out, extra, passthrough;
  for (auto& [name, field] : batch.tokens) {
    const bool standard = name == keys::input_ids || name == keys::inputs_embeds ||
                          name == keys::labels || name == keys::position_ids ||
                          name == keys::loss_mask || name == keys::valid ||
                          name == keys::padding_mask;
    (standard ? out : extra)[py::str(name)] = tensor_to_torch(std::move(field.value));
  }
  if (!extra.empty()) out["extra_tokens"] = extra;
  for (auto& [name, t] : batch.passthrough)
    passthrough[py::str(name)] = tensor_to_torch(std::move(t));
  if (!passthrough.empty()) out["passthrough"] = passthrough;
  if (batch.packed()) out["seq_lens"] = tensor_to_torch(lengths_to(batch.seq_lens));
  if (!batch.seq_lens_padded.empty())
    out["seq_lens_padded"] = tensor_to_torch(lengths_to(batch.seq_lens_padded));
  return out;
}

io::TensorFile shard_from_dict(py::handle obj, const std::string& what) {
  io::TensorFile file;
  for (const auto& [key_obj, value] : as_dict(obj, what)) {
    const std::string key = key_text(key_obj, what);
    const std::string where = fmt::format("{}['{}']", what, key);
    if (py::isinstance<py::dict>(value)) {
      for (const auto& [inner_obj, inner] : py::reinterpret_borrow<py::dict>(value)) {
        const std::string name = key_text(inner_obj, where);
        const std::string flat = file.tensors.count(name) ? key + "." + name : name;
        if (is_tensor(inner)) {
          file.tensors[flat] = tensor_from_torch(inner, fmt::format("{}['{}']", where, name));
        } else {
          file.skipped[flat] = type_name(inner);
        }
      }
    } else if (is_tensor(value)) {
      file.tensors[key] = tensor_from_torch(value, where);
    } else {
      file.skipped[key] = type_name(value);
    }
  }
  return file;
}

}  // namespace cplab::python
