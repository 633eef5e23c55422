#include "core/input_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace cplab {

std::string read_text_file(const std::string& path, std::string_view what) {
  std::error_code ec;
  CPLAB_CHECK(!std::filesystem::is_directory(path, ec), "{}: is a folder, not a {}", path, what);
  std::ifstream in(path, std::ios::binary);
  CPLAB_CHECK(in.good(), "{}: cannot open", path);
  std::ostringstream text;
  text << in.rdbuf();
  CPLAB_CHECK(!in.bad(), "{}: cannot read", path);
  return text.str();
}

}  // namespace cplab
