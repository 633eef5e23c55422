// Replays every kept fuzz input (fuzz/regressions/<target>/<file>) through its target's entry
// point: a crash the fuzzers found once is a test in every build. Exit 0 when all ran.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

using Entry = int (*)(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_npy(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_case(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_merge(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_merge_folders(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_args(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_batch(const std::uint8_t*, std::size_t);
extern "C" int cplab_fuzz_bench(const std::uint8_t*, std::size_t);

int main() {
  const std::map<std::string, Entry> targets = {
      {"npy", cplab_fuzz_npy},     {"case", cplab_fuzz_case},
      {"merge", cplab_fuzz_merge}, {"merge_folders", cplab_fuzz_merge_folders},
      {"args", cplab_fuzz_args},   {"batch", cplab_fuzz_batch},
      {"bench", cplab_fuzz_bench}};
  int replayed = 0;
  for (const auto& [name, entry] : targets) {
    const std::filesystem::path dir = std::filesystem::path(CPLAB_FUZZ_REGRESSIONS) / name;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& file : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(file.path(), std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
      std::printf("%s: %s\n", name.c_str(), file.path().filename().c_str());
      entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  std::printf("replayed %d kept fuzz inputs\n", replayed);
  return 0;
}
