// Lazy plugins (plugin_library.hpp): dlopen on first use, one handle per library, never closed
// (objects the plugin made may outlive any caller).
#include "io/plugin_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
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
