// The torch plugin's entry (torch_plugin_abi.hpp), linked into libcplab_torch_io.so with the two
// libtorch translation units.
#include "io/torch_plugin_abi.hpp"

extern "C" __attribute__((visibility("default"))) const cplab::io::TorchPluginTable*
cplab_torch_io_table() {
  static const cplab::io::TorchPluginTable table{
      .version = cplab::io::kTorchPluginVersion,
      .load_batch = &cplab::io::load_torch_batch,
      .save_batch = &cplab::io::save_torch_batch,
      .load_tensors = &cplab::io::load_torch_tensors,
      .save_tensors = &cplab::io::save_torch_tensors,
      .save_dict = &cplab::io::save_torch_dict,
  };
  return &table;
}
