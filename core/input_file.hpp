#pragma once
// A whole file read as text, with the one-line errors every reader of the project gives.
#include <string>
#include <string_view>

namespace cplab {

// The bytes of `path`. Throws cplab::Error: "PATH: is a folder, not a WHAT" (a folder opens as a
// stream on Linux and would fail only when read, with no word of why), "PATH: cannot open",
// "PATH: cannot read".
std::string read_text_file(const std::string& path, std::string_view what = "file");

}  // namespace cplab
