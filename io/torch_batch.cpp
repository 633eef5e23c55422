// The one translation unit that includes libtorch (narrow headers: <torch/torch.h> costs ~20 s).
#include "io/torch_batch.hpp"

#include <ATen/ATen.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <fmt/ranges.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "core/standard_keys.hpp"
#include "io/tensor_extent.hpp"
#include "io/torch_archive.hpp"
#include "io/torch_dtype.hpp"

namespace cplab::io {
namespace {

using detail::CheckedArchive;
using detail::from_at;
using detail::guard_torch_errors;
using detail::read_file_bytes;
using detail::to_at;

at::Tensor tensor_at(const c10::IValue& v, const std::string& key) {
  CPLAB_CHECK(v.isTensor(), "'{}' must be a tensor, found {}", key, v.tagKind());
  return v.toTensor();
}

// int [B, n] (or [n] for one row) with -1 past a row's last document → per-row lengths.
std::vector<std::vector<std::int64_t>> lengths_from(const CheckedArchive& archive,
                                                    const at::Tensor& t, const std::string& key) {
  CPLAB_CHECK(!t.is_floating_point(), "'{}' must hold integers, found {}", key,
              c10::toString(t.scalar_type()));
  archive.check_readable(t, key, sizeof(std::int64_t));  // copied out as int64
  const at::Tensor rows = (t.dim() == 1 ? t.unsqueeze(0) : t).to(at::kLong).contiguous();
  CPLAB_CHECK(rows.dim() == 2, "'{}' must be [B, n] or [n], found {} dims", key, t.dim());
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(rows.size(0)));
  const auto* p = rows.data_ptr<int64_t>();
  for (int64_t b = 0; b < rows.size(0); ++b) {
    bool ended = false;
    for (int64_t i = 0; i < rows.size(1); ++i) {
      const int64_t n = p[b * rows.size(1) + i];
      // Any negative value ends the row's documents (Automodel's collater writes -1000, others -1).
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

at::Tensor lengths_to(const std::vector<std::vector<std::int64_t>>& rows) {
  std::size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.size());
  at::Tensor out =
      at::full({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)}, -1, at::kLong);
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

// Keys whose meaning cplab knows: a value of another kind is a mistaken file, not an entry to skip.
bool is_known_key(const std::string& key) {
  return key == "extra_tokens" || key == "passthrough" || key == "seq_lens" ||
         key == "seq_lens_padded" || key == keys::input_ids || key == keys::inputs_embeds ||
         key == keys::labels || key == keys::position_ids || key == keys::loss_mask ||
         key == keys::valid || key == keys::padding_mask;
}

Batch load_batch_unguarded(const std::string& path, SkippedEntries* skipped) {
  const CheckedArchive archive(read_file_bytes(path, "batch file "), path);
  const c10::IValue& root = archive.root();
  Batch batch;
  SkippedEntries skips;
  // Sharders keep non-tensor entries in their batch dicts (Automodel's qkv_format "thd", cp_size):
  // they are not the batch's data, so they are recorded and skipped, not refused.
  const auto skip = [&](const std::string& name, const c10::IValue& value) {
    skips[name] = value.tagKind();
  };
  for (const auto& entry : dict_at(root, path)) {
    CPLAB_CHECK(entry.key().isString(), "'{}': dict keys must be strings", path);
    const std::string key = entry.key().toStringRef();
    if (!entry.value().isTensor() && !is_known_key(key)) {
      skip(key, entry.value());
    } else if (key == "extra_tokens" || key == "passthrough") {
      for (const auto& e : dict_at(entry.value(), key)) {
        CPLAB_CHECK(e.key().isString(), "'{}': dict keys must be strings", key);
        const std::string name = e.key().toStringRef();
        if (!e.value().isTensor()) {
          skip(key + "." + name, e.value());
          continue;
        }
        Tensor value = from_at(archive, e.value().toTensor(), name);
        if (key == "passthrough") {
          batch.passthrough[name] = std::move(value);
        } else {
          batch.tokens[name] = TokenField{std::move(value), 1, PadRule::constant, 0.0};
        }
      }
    } else if (key == "seq_lens") {
      batch.seq_lens = lengths_from(archive, tensor_at(entry.value(), key), key);
    } else if (key == "seq_lens_padded") {
      batch.seq_lens_padded = lengths_from(archive, tensor_at(entry.value(), key), key);
    } else {
      Tensor value = from_at(archive, tensor_at(entry.value(), key), key);
      check_standard_key(key, value);
      batch.add(key, std::move(value));
    }
  }
  validate_batch(batch);
  if (skipped != nullptr) *skipped = std::move(skips);
  return batch;
}

}  // namespace

bool torch_available() { return true; }

Batch load_torch_batch(const std::string& path, SkippedEntries* skipped) {
  return guard_torch_errors(path, [&] { return load_batch_unguarded(path, skipped); });
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
  if (!batch.seq_lens_padded.empty())
    root.insert("seq_lens_padded", lengths_to(batch.seq_lens_padded));
  const std::vector<char> bytes = torch::jit::pickle_save(root);
  std::ofstream out(path, std::ios::binary);
  CPLAB_CHECK(out.good(), "cannot write batch file '{}'", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CPLAB_CHECK(out.good(), "short write to batch file '{}'", path);
}

namespace detail {
namespace {

DType from_torch(at::ScalarType t, const std::string& key) {
  const std::optional<DType> dtype = dtype_from_torch(t);
  CPLAB_CHECK(dtype.has_value(),
              "'{}' has dtype {}; supported: float32, bfloat16, float16, int64, int32, uint8, bool",
              key, c10::toString(t));
  return *dtype;
}

at::ScalarType to_torch(DType t) { return dtype_to_torch(t); }

}  // namespace

Tensor from_at(const CheckedArchive& archive, const at::Tensor& value, const std::string& key) {
  archive.check_readable(value, key);  // its view inside the bytes the file really holds
  const at::Tensor c = value.contiguous();
  Tensor out(from_torch(c.scalar_type(), key), Shape(c.sizes().begin(), c.sizes().end()));
  if (out.nbytes() > 0) std::memcpy(out.raw(), c.data_ptr(), out.nbytes());
  return out;
}

at::Tensor to_at(const Tensor& t) {
  at::Tensor out = at::empty(std::vector<int64_t>(t.shape().begin(), t.shape().end()),
                             at::TensorOptions().dtype(to_torch(t.dtype())));
  if (t.nbytes() > 0) std::memcpy(out.data_ptr(), t.raw(), t.nbytes());
  return out;
}

namespace {

class BytesAdapter final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BytesAdapter(const std::vector<char>& bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char*) const override {
    if (pos >= bytes_.size()) return 0;
    n = std::min<size_t>(n, bytes_.size() - static_cast<size_t>(pos));
    std::memcpy(buf, bytes_.data() + pos, n);
    return n;
  }

 private:
  const std::vector<char>& bytes_;
};

}  // namespace

// torch::jit::pickle_load, with every storage record's size noted.
CheckedArchive::CheckedArchive(const std::vector<char>& bytes, std::string path)
    : path_(std::move(path)), file_bytes_(bytes.size()) {
  caffe2::serialize::PyTorchStreamReader zip(std::make_shared<BytesAdapter>(bytes));
  auto [pickle, pickle_size] = zip.getRecord("data.pkl");
  const char* data = static_cast<const char*>(pickle.get());
  std::size_t consumed = 0;
  const auto read = [&](char* buffer, std::size_t len) -> std::size_t {
    len = std::min(len, pickle_size - consumed);
    if (len > 0) std::memcpy(buffer, data + consumed, len);
    consumed += len;
    return len;
  };
  const auto read_record = [&](const std::string& name) {
    auto [record, size] = zip.getRecord("data/" + name);
    records_[record.get()] = size;
    return std::move(record);
  };
  torch::jit::Unpickler unpickler(read, nullptr, nullptr, read_record, c10::nullopt);
  unpickler.set_version(zip.version());
  root_ = unpickler.parse_ivalue();
}

void CheckedArchive::check_readable(const at::Tensor& value, const std::string& key,
                                    std::int64_t copy_itemsize) const {
  CPLAB_CHECK(value.layout() == at::kStrided && !value.is_quantized() && value.device().is_cpu(),
              "'{}' is not a dense CPU tensor", key);
  CPLAB_CHECK(value.dim() <= 64, "'{}' has {} dimensions (at most 64)", key, value.dim());
  const auto sizes = value.sizes();
  const auto strides = value.strides();
  const std::optional<std::uint64_t> needed =
      strided_extent_bytes({sizes.data(), sizes.size()}, {strides.data(), strides.size()},
                           value.storage_offset(), static_cast<std::int64_t>(value.element_size()));
  CPLAB_CHECK(needed.has_value(), "'{}' has sizes or strides out of range (malformed file)", key);
  const auto record = records_.find(value.storage().data());
  const std::uint64_t held =
      record == records_.end()
          ? 0
          : std::min(static_cast<std::uint64_t>(value.storage().nbytes()), record->second);
  CPLAB_CHECK(*needed == 0 || *needed <= held,
              "'{}' of sizes {} reads {} bytes of a storage that holds {} (malformed or truncated "
              "file)",
              key, fmt::format("{}", sizes), *needed, held);
  // Inside its storage, a view can still repeat it (stride 0, overlapping strides): its dense
  // copy is then larger than anything the file holds. Bounded before contiguous() allocates it.
  const std::int64_t itemsize =
      copy_itemsize > 0 ? copy_itemsize : static_cast<std::int64_t>(value.element_size());
  const std::optional<std::uint64_t> copy = dense_bytes({sizes.data(), sizes.size()}, itemsize);
  const std::uint64_t allowance = file_bytes_ + kMaxCopiedBytesBeyondFile;
  CPLAB_CHECK(copy.has_value() && *copy <= allowance - std::min(allowance, copied_bytes_),
              "'{}': '{}' of sizes {} would take {} bytes copied out; a file's tensors may take "
              "its own size ({} bytes) plus {} for views that repeat their storage (expand()), "
              "and {} are taken: refused before allocating (save it .contiguous() or unexpanded)",
              path_, key, fmt::format("{}", sizes),
              copy ? fmt::format("{}", *copy) : std::string("more than 2^63"), file_bytes_,
              kMaxCopiedBytesBeyondFile, copied_bytes_);
  copied_bytes_ += *copy;
}

std::vector<char> read_file_bytes(const std::string& path, const std::string& kind) {
  std::ifstream in(path, std::ios::binary);
  CPLAB_CHECK(in.good(), "cannot open {}'{}'", kind, path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CPLAB_CHECK(!in.bad(), "cannot read {}'{}'", kind, path);
  return bytes;
}

std::string first_line(const std::string& text) {
  const std::size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

}  // namespace detail

}  // namespace cplab::io
