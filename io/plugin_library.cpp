// Lazy plugins (plugin_library.hpp): dlopen on first use, one handle per library, never closed
// (objects the plugin made may outlive any caller).
#include "io/plugin_library.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "core/error.hpp"

namespace cplab::io {
namespace {

std::mutex& plugins_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::string, void*>& open_plugins() {
  static std::map<std::string, void*> handles;
  return handles;
}

std::string executable_dir() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string() : self.parent_path().string();
}

std::vector<std::string> search_dirs() {
  if (const char* pinned = std::getenv("CPLAB_PLUGIN_DIR"); pinned != nullptr) return {pinned};
  std::vector<std::string> dirs;
  if (std::string dir = executable_dir(); !dir.empty()) dirs.push_back(std::move(dir));
#ifdef CPLAB_PLUGIN_BUILD_DIR
  if (dirs.empty() || dirs.front() != CPLAB_PLUGIN_BUILD_DIR)
    dirs.push_back(CPLAB_PLUGIN_BUILD_DIR);
#endif
  return dirs;
}

// The first line of dlerror()'s text (it names the file and the reason).
std::string loader_reason() {
  const char* text = ::dlerror();
  std::string reason = text != nullptr ? text : "unknown reason";
  if (const std::size_t newline = reason.find('\n'); newline != std::string::npos)
    reason.resize(newline);
  return reason;
}

// Reads `size` bytes at `offset` of an open file; false when the file ends before.
bool read_at(int fd, std::uint64_t offset, void* out, std::size_t size) {
  auto* at = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t got = ::pread(fd, at, size, static_cast<off_t>(offset));
    if (got <= 0) return false;
    at += got, offset += static_cast<std::uint64_t>(got), size -= static_cast<std::size_t>(got);
  }
  return true;
}

// Why the file at `path` cannot be handed to dlopen, or "" when it can. The loader maps a shared
// object's segments as the headers say: a file cut short inside them is mapped past its end, and
// the first touch of those pages is SIGBUS, not an error; a FIFO makes dlopen wait for a writer.
// So what is opened is a regular file, a 64-bit shared object of this machine, whose program
// headers, loaded segments and section headers all lie inside the file.
std::string unloadable_reason(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error) return "cannot be read: " + error.message();
  if (!std::filesystem::is_regular_file(status)) return "it is not a regular file";
  const std::uint64_t size = std::filesystem::file_size(path, error);
  if (error) return "cannot be read: " + error.message();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot be opened: {}", std::strerror(errno));
  std::string why;
  Elf64_Ehdr header{};
  if (!read_at(fd, 0, &header, sizeof header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    why = "it is not an ELF shared object";
  } else if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != EM_X86_64 ||
             header.e_type != ET_DYN || header.e_phentsize != sizeof(Elf64_Phdr)) {
    why = "it is not a 64-bit x86-64 shared object";
  } else if (header.e_phoff > size ||
             header.e_phnum > (size - header.e_phoff) / sizeof(Elf64_Phdr)) {
    why = fmt::format("it is cut short ({} bytes) before its program headers end", size);
  } else if (header.e_shnum > 0 &&
             (header.e_shoff > size || header.e_shentsize == 0 ||
              header.e_shnum > (size - header.e_shoff) / header.e_shentsize)) {
    why = fmt::format("it is cut short ({} bytes) before its section headers end", size);
  } else {
    for (std::uint16_t i = 0; i < header.e_phnum && why.empty(); ++i) {
      Elf64_Phdr segment{};
      if (!read_at(fd, header.e_phoff + i * sizeof(Elf64_Phdr), &segment, sizeof segment)) {
        why = "its program headers cannot be read";
      } else if (segment.p_type == PT_LOAD &&
                 (segment.p_offset > size || segment.p_filesz > size - segment.p_offset)) {
        why = fmt::format("it is cut short ({} bytes) inside a segment that ends at byte {}", size,
                          segment.p_offset + segment.p_filesz);
      }
    }
  }
  ::close(fd);
  return why;
}

void* open_plugin(const std::string& file_name, const std::string& purpose) {
  auto& handles = open_plugins();
  if (auto it = handles.find(file_name); it != handles.end()) return it->second;
  const std::vector<std::string> dirs = search_dirs();
  std::string tried;
  std::string first_reason;
  for (const std::string& dir : dirs) {
    const std::string path = (std::filesystem::path(dir) / file_name).string();
    tried += (tried.empty() ? "" : ", ") + dir;
    std::error_code error;
    if (!std::filesystem::exists(path, error)) continue;
    if (const std::string why = unloadable_reason(path); !why.empty()) {
      if (first_reason.empty()) first_reason = path + ": " + why;
      continue;
    }
    // RTLD_LOCAL: the plugin's copies of cplab's own code stay its own.
    if (void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); handle != nullptr) {
      handles.emplace(file_name, handle);
      return handle;
    }
    if (first_reason.empty()) first_reason = loader_reason();
  }
  CPLAB_FAIL("{} needs the plugin {}, {} (looked in {}{})", purpose, file_name,
             first_reason.empty() ? "which is missing" : "which cannot be loaded: " + first_reason,
             tried.empty() ? "no folder" : tried,
             std::getenv("CPLAB_PLUGIN_DIR") != nullptr ? ", from CPLAB_PLUGIN_DIR" : "");
}

}  // namespace

void* plugin_symbol(const std::string& file_name, const char* entry, const std::string& purpose) {
  const std::lock_guard<std::mutex> lock(plugins_mutex());
  void* handle = open_plugin(file_name, purpose);
  ::dlerror();
  void* symbol = ::dlsym(handle, entry);
  CPLAB_CHECK(symbol != nullptr, "{}: the plugin {} has no entry {} ({})", purpose, file_name,
              entry, loader_reason());
  return symbol;
}

bool plugin_opened(const std::string& file_name) {
  const std::lock_guard<std::mutex> lock(plugins_mutex());
  return open_plugins().count(file_name) != 0;
}

}  // namespace cplab::io
