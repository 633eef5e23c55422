#pragma once
// Shared libraries cplab opens only when a command needs them: the torch.save reader (libtorch) and
// the GPU implementation (the CUDA runtime, NCCL). Linking them into every executable cost each
// command about 0.8 s and 160 MB before it did anything; now a command that reads no .pt file and
// runs no GPU code never maps them.
//
// A plugin is looked for, in this order and nowhere else:
//   1. $CPLAB_PLUGIN_DIR, when it is set (then only there: a test or an install can pin it);
//   2. the folder of the running executable (cplab and its plugins are installed side by side);
//   3. the build-tree folder the plugins were built into (tests, benchmarks, the Python module).
#include <string>

namespace cplab::io {

// The symbol `entry` of plugin `file_name` (e.g. "libcplab_torch_io.so"), the library opened once
// per process and never closed. Throws cplab::Error with one line naming what is missing, where it
// was looked for and the loader's reason; `purpose` says what needed it ("reading torch.save
// files").
void* plugin_symbol(const std::string& file_name, const char* entry, const std::string& purpose);

// Whether the plugin's library has been opened in this process (tests: a command that needs no
// plugin leaves it unopened).
bool plugin_opened(const std::string& file_name);

}  // namespace cplab::io
