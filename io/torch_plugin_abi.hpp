#pragma once
// The torch plugin's one entry (io/plugin_library.hpp): libcplab_torch_io.so holds the libtorch
// translation units (torch_batch.cpp, torch_tensors.cpp) and hands their functions over as this
// table. Executable and plugin are built from the same tree by the same compiler, so C++ types and
// exceptions (cplab::Error) cross as they are; the version catches a plugin left from another
// build.
#include <cstdint>
#include <map>
#include <string>

#include "io/torch_batch.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::io {

inline constexpr const char* kTorchPluginFile = "libcplab_torch_io.so";
inline constexpr const char* kTorchPluginEntry = "cplab_torch_io_table";
inline constexpr std::uint32_t kTorchPluginVersion = 1;

struct TorchPluginTable {
  std::uint32_t version = kTorchPluginVersion;
  Batch (*load_batch)(const std::string& path, SkippedEntries* skipped) = nullptr;
  void (*save_batch)(const Batch& batch, const std::string& path) = nullptr;
  TensorFile (*load_tensors)(const std::string& path) = nullptr;
  void (*save_tensors)(const std::map<std::string, Tensor>& tensors,
                       const std::string& path) = nullptr;
  void (*save_dict)(const std::map<std::string, DictEntry>& entries,
                    const std::string& path) = nullptr;
};

using TorchPluginEntry = const TorchPluginTable* (*)();

}  // namespace cplab::io
