// The one translation unit of the module that includes libtorch (its headers cost seconds each).
#include "python/tensor_bridge.hpp"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/tensor_dtypes.h>

#include <memory>
#include <optional>

#include "core/error.hpp"
#include "core/standard_keys.hpp"
#include "io/torch_dtype.hpp"

namespace cplab::python {
namespace py = pybind11;

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// libtorch's exceptions as cplab's one line (the backtrace dropped).
template <class Body>
auto guard_torch(const std::string& what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const c10::Error& e) {
    throw DetailedError(fmt::format("{}: {}", what, first_line(e.what_without_backtrace())),
                        e.what());
  }
}

DType from_torch(at::ScalarType t, const std::string& what) {
  const std::optional<DType> dtype = io::dtype_from_torch(t);
  CPLAB_CHECK(
      dtype.has_value(),
      "{} has dtype {}; cplab holds float32, bfloat16, float16, int64, int32, uint8 and bool "
      "(convert it with .to(...))",
      what, "torch." + torch::utils::getDtypeNames(t).first);
  return *dtype;
}

at::ScalarType to_torch(DType t) { return io::dtype_to_torch(t); }

std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__")).cast<std::string>();
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

bool is_tensor(py::handle obj) { return THPVariable_Check(obj.ptr()); }

Tensor tensor_from_torch(py::handle obj, const std::string& what) {
  CPLAB_CHECK(is_tensor(obj), "{} is a {}, not a torch.Tensor", what, type_name(obj));
  return guard_torch(what, [&] {
    const at::Tensor& src = THPVariable_Unpack(obj.ptr());
    CPLAB_CHECK(src.layout() == at::kStrided && !src.is_quantized(),
                "{} is not a dense tensor (layout {}); pass .to_dense()", what,
                c10::toString(src.layout()));
    CPLAB_CHECK(src.device().is_cpu(), "{} is on {}; cplab reads CPU tensors (pass .cpu())", what,
                src.device().str());
    CPLAB_CHECK(src.dim() <= 64, "{} has {} dimensions (at most 64)", what, src.dim());
    Tensor out(from_torch(src.scalar_type(), what), Shape(src.sizes().begin(), src.sizes().end()),
               Uninitialized{});
    if (out.nbytes() > 0) {
      at::Tensor dst = at::from_blob(out.raw(), src.sizes(), src.options().dtype(src.dtype()));
      dst.copy_(src.detach());  // the one copy; strided and broadcast views resolved here
    }
    return out;
  });
}

py::object tensor_to_torch(Tensor tensor) {
  return guard_torch("a result", [&] {
    const std::vector<std::int64_t> sizes(tensor.shape().begin(), tensor.shape().end());
    const auto options = at::TensorOptions().dtype(to_torch(tensor.dtype()));
    at::Tensor out;
    if (tensor.nbytes() == 0) {
      out = at::empty(sizes, options);
    } else {
      auto owner = std::make_unique<Tensor>(std::move(tensor));
      void* data = owner->raw();
      out = at::from_blob(
          data, sizes, [held = owner.get()](void*) { delete held; }, options);
      owner.release();  // from_blob's deleter owns it now
    }
    return py::reinterpret_steal<py::object>(THPVariable_Wrap(std::move(out)));
  });
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
