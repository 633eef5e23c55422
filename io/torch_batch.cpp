// The one translation unit that includes libtorch (narrow headers: <torch/torch.h> costs ~20 s).
#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <fstream>
#include <iterator>

#include "io/torch_batch.hpp"

namespace cplab::io {
namespace {

DType from_torch(at::ScalarType t, const std::string& key) {
  switch (t) {
    case at::kFloat: return DType::f32;
    case at::kBFloat16: return DType::bf16;
    case at::kHalf: return DType::f16;
    case at::kLong: return DType::i64;
    case at::kInt: return DType::i32;
    case at::kByte: return DType::u8;
    case at::kBool: return DType::b8;
    default:
      CPLAB_FAIL("'{}' has dtype {}; supported: float32, bfloat16, float16, int64, int32, uint8, bool",
                 key, c10::toString(t));
  }
}

at::ScalarType to_torch(DType t) {
  switch (t) {
    case DType::f32: return at::kFloat;
    case DType::bf16: return at::kBFloat16;
    case DType::f16: return at::kHalf;
    case DType::i64: return at::kLong;
    case DType::i32: return at::kInt;
    case DType::u8: return at::kByte;
    case DType::b8: return at::kBool;
  }
  CPLAB_FAIL("unsupported dtype {}", static_cast<int>(t));
}

Tensor from_at(const at::Tensor& value, const std::string& key) {
  const at::Tensor c = value.contiguous();
  Shape shape(c.sizes().begin(), c.sizes().end());
  Tensor out(from_torch(c.scalar_type(), key), shape);
  std::memcpy(out.raw(), c.data_ptr(), out.nbytes());
  return out;
}

at::Tensor to_at(const Tensor& t) {
  std::vector<int64_t> sizes(t.shape().begin(), t.shape().end());
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(to_torch(t.dtype())));
  std::memcpy(out.data_ptr(), t.raw(), t.nbytes());
  return out;
}

at::Tensor tensor_at(const c10::IValue& v, const std::string& key) {
  CPLAB_CHECK(v.isTensor(), "'{}' must be a tensor, found {}", key, v.tagKind());
  return v.toTensor();
}

// int [B, n] (or [n] for one row) with -1 past a row's last document → per-row lengths.
std::vector<std::vector<std::int64_t>> lengths_from(const at::Tensor& t, const std::string& key) {
  CPLAB_CHECK(!t.is_floating_point(), "'{}' must hold integers, found {}", key,
              c10::toString(t.scalar_type()));
  const at::Tensor rows = (t.dim() == 1 ? t.unsqueeze(0) : t).to(at::kLong).contiguous();
  CPLAB_CHECK(rows.dim() == 2, "'{}' must be [B, n] or [n], found {} dims", key, t.dim());
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(rows.size(0)));
  const auto* p = rows.data_ptr<int64_t>();
  for (int64_t b = 0; b < rows.size(0); ++b) {
    bool ended = false;
    for (int64_t i = 0; i < rows.size(1); ++i) {
      const int64_t n = p[b * rows.size(1) + i];
      // Any negative value ends the row's documents (Automodel's collater writes -1000, others -1).
      if (n < 0) { ended = true; continue; }
      CPLAB_CHECK(!ended, "'{}' row {}: length {} at document {} after a negative end marker (negative values only after the last document)",
                  key, b, n, i);
      out[static_cast<std::size_t>(b)].push_back(n);
    }
  }
  return out;
}

at::Tensor lengths_to(const std::vector<std::vector<std::int64_t>>& rows) {
  std::size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  at::Tensor out = at::full({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, -1, at::kLong);
  auto* p = out.data_ptr<int64_t>();
  for (std::size_t b = 0; b < rows.size(); ++b) {
    for (std::size_t i = 0; i < rows[b].size(); ++i) p[b * width + i] = rows[b][i];
  }
  return out;
}

c10::Dict<c10::IValue, c10::IValue> dict_at(const c10::IValue& v, const std::string& key) {
  CPLAB_CHECK(v.isGenericDict(), "'{}' must be a dict, found {}", key, v.tagKind());
  return v.toGenericDict();
}

}  // namespace

bool torch_available() { return true; }

Batch load_torch_batch(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CPLAB_CHECK(in.good(), "cannot open batch file '{}'", path);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  c10::IValue root;
  try {
    root = torch::jit::pickle_load(bytes);
  } catch (const c10::Error& e) {
    CPLAB_FAIL("'{}' is not a torch.save file cplab can read: {}", path, e.what_without_backtrace());
  }
  Batch batch;
  for (const auto& entry : dict_at(root, path)) {
    CPLAB_CHECK(entry.key().isString(), "'{}': dict keys must be strings", path);
    const std::string key = entry.key().toStringRef();
    if (key == "extra_tokens") {
      for (const auto& e : dict_at(entry.value(), key)) {
        const std::string name = e.key().toStringRef();
        batch.tokens[name] = TokenField{from_at(tensor_at(e.value(), name), name), 1, PadRule::constant, 0.0};
      }
    } else if (key == "passthrough") {
      for (const auto& e : dict_at(entry.value(), key)) {
        const std::string name = e.key().toStringRef();
        batch.passthrough[name] = from_at(tensor_at(e.value(), name), name);
      }
    } else if (key == "seq_lens") {
      batch.seq_lens = lengths_from(tensor_at(entry.value(), key), key);
    } else if (key == "seq_lens_padded") {
      batch.seq_lens_padded = lengths_from(tensor_at(entry.value(), key), key);
    } else {
      batch.add(key, from_at(tensor_at(entry.value(), key), key));
    }
  }
  validate_batch(batch);
  return batch;
}

void save_torch_batch(const Batch& batch, const std::string& path) {
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  c10::impl::GenericDict extra(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [name, field] : batch.tokens) {
    const bool is_standard = name == keys::input_ids || name == keys::inputs_embeds ||
                             name == keys::labels || name == keys::position_ids ||
                             name == keys::loss_mask || name == keys::valid ||
                             name == keys::padding_mask;
    (is_standard ? root : extra).insert(name, to_at(field.value));
  }
  if (extra.size() > 0) root.insert("extra_tokens", extra);
  if (!batch.passthrough.empty()) {
    c10::impl::GenericDict pass(c10::StringType::get(), c10::AnyType::get());
    for (const auto& [name, t] : batch.passthrough) pass.insert(name, to_at(t));
    root.insert("passthrough", pass);
  }
  if (batch.packed()) root.insert("seq_lens", lengths_to(batch.seq_lens));
  if (!batch.seq_lens_padded.empty()) root.insert("seq_lens_padded", lengths_to(batch.seq_lens_padded));
  const std::vector<char> bytes = torch::jit::pickle_save(root);
  std::ofstream out(path, std::ios::binary);
  CPLAB_CHECK(out.good(), "cannot write batch file '{}'", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CPLAB_CHECK(out.good(), "short write to batch file '{}'", path);
}

}  // namespace cplab::io
