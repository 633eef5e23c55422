// io/'s torch functions in a build with libtorch: each opens the torch plugin on first use
// (io/plugin_library.hpp) and calls its copy, so that executables link no libtorch and only the
// commands that read or write torch.save files pay for loading it.
#include <fmt/format.h>

#include "core/error.hpp"
#include "io/plugin_library.hpp"
#include "io/torch_plugin_abi.hpp"

namespace cplab::io {
namespace {

const TorchPluginTable& plugin(const std::string& verb, const std::string& path) {
  const std::string purpose = fmt::format("cannot {} '{}': torch.save support", verb, path);
  auto entry = reinterpret_cast<TorchPluginEntry>(
      plugin_symbol(kTorchPluginFile, kTorchPluginEntry, purpose));
  const TorchPluginTable* table = entry();
  CPLAB_CHECK(table != nullptr && table->version == kTorchPluginVersion,
              "{}: the plugin {} is from another build (version {}, expected {})", purpose,
              kTorchPluginFile, table != nullptr ? table->version : 0, kTorchPluginVersion);
  return *table;
}

}  // namespace

bool torch_available() { return true; }

Batch load_torch_batch(const std::string& path, SkippedEntries* skipped) {
  return plugin("read", path).load_batch(path, skipped);
}

void save_torch_batch(const Batch& batch, const std::string& path) {
  plugin("write", path).save_batch(batch, path);
}

TensorFile load_torch_tensors(const std::string& path) {
  return plugin("read", path).load_tensors(path);
}

void save_torch_tensors(const std::map<std::string, Tensor>& tensors, const std::string& path) {
  plugin("write", path).save_tensors(tensors, path);
}

void save_torch_dict(const std::map<std::string, DictEntry>& entries, const std::string& path) {
  plugin("write", path).save_dict(entries, path);
}

}  // namespace cplab::io
