// Named tensors of a torch.save file (torch_tensors.hpp). Narrow libtorch headers only.
#include "io/torch_tensors.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "io/torch_archive.hpp"

namespace cplab::io {
namespace {

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
      file.tensors[name] = detail::from_at(archive, value.toTensor(), name);
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
    const detail::CheckedArchive archive(detail::read_file_bytes(path, ""), path);
    const c10::IValue& root = archive.root();
    TensorFile file;
    if (root.isTensor()) {
      file.tensors[""] = detail::from_at(archive, root.toTensor(), path);
      return file;
    }
    CPLAB_CHECK(root.isGenericDict(), "'{}' holds a {}, not a tensor or a dict of tensors", path,
                root.tagKind());
    add_entries(archive, file, root.toGenericDict(), "", path);
    return file;
  });
}

void save_torch_dict(const std::map<std::string, DictEntry>& entries, const std::string& path) {
  c10::impl::GenericDict root(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [name, entry] : entries) {
    if (const auto* t = std::get_if<Tensor>(&entry)) {
      root.insert(name, detail::to_at(*t));
    } else if (const auto* text = std::get_if<std::string>(&entry)) {
      root.insert(name, *text);
    } else {
      root.insert(name, std::get<std::int64_t>(entry));
    }
  }
  const std::vector<char> bytes = torch::jit::pickle_save(root);
  std::ofstream out(path, std::ios::binary);
  CPLAB_CHECK(out.good(), "cannot write '{}'", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  CPLAB_CHECK(out.good(), "short write to '{}'", path);
}

void save_torch_tensors(const std::map<std::string, Tensor>& tensors, const std::string& path) {
  save_torch_dict(std::map<std::string, DictEntry>(tensors.begin(), tensors.end()), path);
}

}  // namespace cplab::io
