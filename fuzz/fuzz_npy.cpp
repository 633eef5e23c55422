// .npy bytes from the fuzzer, read back by cplab's reader: it must return a tensor whose bytes the
// header accounts for, or throw cplab::Error; never crash, overread or allocate what the file
// does not hold.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // npy::read takes a path: one scratch file per process, rewritten for each input.
  static const std::string path =
      std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/cplab_fuzz_npy." +
      std::to_string(::getpid()) + ".npy";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  if (size > 0) std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    const cplab::Tensor t = cplab::io::npy::read(path);
    // What was read must fit in what was given (a wrapped size check would break this).
    if (t.nbytes() > size) __builtin_trap();
  } catch (const cplab::Error&) {
  }
  return 0;
}
