#include "io/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/error.hpp"

namespace cplab::io::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
// NumPy writes headers of a few hundred bytes; a longer one is not read into memory.
constexpr std::uint64_t kMaxHeaderBytes = 1 << 16;
// Dimensions of a shape cplab takes (NumPy's own limit is 64).
constexpr std::size_t kMaxDims = 64;

struct Descr {
  const char* text;
  DType dtype;
  std::size_t file_bytes;  // element size in the file
};

// '=' (native) is little-endian on every machine cplab runs on; one-byte types use '|'.
constexpr Descr kDescrs[] = {
    {"<f4", DType::f32, 4}, {"=f4", DType::f32, 4}, {"<f8", DType::f32, 8}, {"=f8", DType::f32, 8},
    {"<f2", DType::f16, 2}, {"=f2", DType::f16, 2}, {"<i8", DType::i64, 8}, {"=i8", DType::i64, 8},
    {"<i4", DType::i32, 4}, {"=i4", DType::i32, 4}, {"|u1", DType::u8, 1},  {"<u1", DType::u8, 1},
    {"|b1", DType::b8, 1},  {"<b1", DType::b8, 1},
};

// The value of 'key' in the header dict, up to the next ',' or ')' (or the closing quote for
// strings).
std::string header_value(const std::string& path, const std::string& header,
                         const std::string& key) {
  const std::size_t at = header.find("'" + key + "'");
  CPLAB_CHECK(at != std::string::npos, "{}: .npy header has no '{}' entry: {}", path, key, header);
  std::size_t start = header.find(':', at);
  CPLAB_CHECK(start != std::string::npos, "{}: .npy header entry '{}' has no value", path, key);
  ++start;
  while (start < header.size() && header[start] == ' ') ++start;
  if (start < header.size() && (header[start] == '\'' || header[start] == '"')) {
    const std::size_t end = header.find(header[start], start + 1);
    CPLAB_CHECK(end != std::string::npos, "{}: .npy header entry '{}' has an unterminated string",
                path, key);
    return header.substr(start + 1, end - start - 1);
  }
  if (start < header.size() && header[start] == '(') {
    const std::size_t end = header.find(')', start);
    CPLAB_CHECK(end != std::string::npos, "{}: .npy header shape has no closing ')'", path);
    return header.substr(start + 1, end - start - 1);
  }
  const std::size_t end = header.find_first_of(",}", start);
  return header.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

Shape parse_shape(const std::string& path, const std::string& text) {
  Shape shape;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    item.erase(0, item.find_first_not_of(" L"));
    item.erase(item.find_last_not_of(" L") + 1);
    if (!item.empty()) {
      std::int64_t value = -1;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      CPLAB_CHECK(ec == std::errc() && end == item.data() + item.size() && value >= 0,
                  "{}: .npy shape ({}) has '{}', not a non-negative integer", path, text, item);
      shape.push_back(value);
      CPLAB_CHECK(shape.size() <= kMaxDims, "{}: .npy shape has more than {} dimensions", path,
                  kMaxDims);
    }
    start = comma + 1;
  }
  return shape;
}

const Descr& find_descr(const std::string& path, const std::string& text) {
  for (const Descr& descr : kDescrs) {
    if (text == descr.text) return descr;
  }
  CPLAB_FAIL(
      "{}: .npy dtype '{}' is not supported; supported: <f4, <f8 (read as f32), <f2, <i8, <i4, "
      "|u1, |b1 "
      "(little-endian)",
      path, text);
}

}  // namespace

Tensor read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CPLAB_CHECK(in.good(), "{}: cannot open the .npy file", path);
  // The file's real size first: nothing is allocated for sizes the file does not hold.
  in.seekg(0, std::ios::end);
  const std::streamoff file_size = in.tellg();
  CPLAB_CHECK(file_size >= 0, "{}: cannot read the .npy file (not a regular file?)", path);
  in.seekg(0, std::ios::beg);
  const auto file_bytes = static_cast<std::uint64_t>(file_size);
  char lead[12] = {};
  const std::size_t lead_len = static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, 12));
  in.read(lead, static_cast<std::streamsize>(lead_len));
  CPLAB_CHECK(lead_len >= kMagicLen + 4 && std::memcmp(lead, kMagic, kMagicLen) == 0,
              "{}: not a .npy file (no \\x93NUMPY magic at its start; {} bytes)", path, file_bytes);
  const auto major = static_cast<unsigned char>(lead[6]);
  CPLAB_CHECK(major >= 1 && major <= 3,
              "{}: .npy format version {}.{} is not supported (1.0 to 3.0)", path, major,
              static_cast<unsigned char>(lead[7]));
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  CPLAB_CHECK(lead_len >= 8 + len_bytes, "{}: .npy file ends inside its header length", path);
  std::uint64_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i)
    header_len |= static_cast<std::uint64_t>(static_cast<unsigned char>(lead[8 + i])) << (8 * i);
  const std::uint64_t data_start = 8 + len_bytes + header_len;
  CPLAB_CHECK(file_bytes >= data_start, "{}: .npy header claims {} bytes but the file has {}", path,
              header_len, file_bytes);
  CPLAB_CHECK(header_len <= kMaxHeaderBytes,
              "{}: .npy header of {} bytes is longer than cplab reads ({} bytes)", path, header_len,
              kMaxHeaderBytes);
  std::string header(static_cast<std::size_t>(header_len), '\0');
  in.seekg(static_cast<std::streamoff>(8 + len_bytes));
  in.read(header.data(), static_cast<std::streamsize>(header_len));
  CPLAB_CHECK(in.good(), "{}: cannot read the .npy header", path);
  while (!header.empty() && (header.back() == '\n' || header.back() == ' ')) header.pop_back();
  CPLAB_CHECK(header.find('\n') == std::string::npos, "{}: .npy header is not one line", path);
  const Descr& descr = find_descr(path, header_value(path, header, "descr"));
  const std::string fortran = header_value(path, header, "fortran_order");
  CPLAB_CHECK(fortran.find("False") != std::string::npos,
              "{}: .npy data in Fortran order is not supported (save "
              "with np.ascontiguousarray)",
              path);
  const Shape shape = parse_shape(path, header_value(path, header, "shape"));
  // Overflow-safe: a declared shape whose byte count wraps must not pass as a small file.
  std::uint64_t expected = descr.file_bytes;
  for (std::int64_t d : shape) {
    CPLAB_CHECK(!__builtin_mul_overflow(expected, static_cast<std::uint64_t>(d), &expected),
                "{}: .npy shape {} of dtype {} holds more than 2^64 bytes", path, shape_str(shape),
                descr.text);
  }
  const std::uint64_t held = file_bytes - data_start;
  CPLAB_CHECK(held == expected,
              "{}: .npy data of shape {} and dtype {} needs {} bytes, the file holds {}", path,
              shape_str(shape), descr.text, expected, held);
  std::vector<char> bytes(static_cast<std::size_t>(held));
  in.seekg(static_cast<std::streamoff>(data_start));
  in.read(bytes.data(), static_cast<std::streamsize>(held));
  CPLAB_CHECK(in.good() || held == 0, "{}: the .npy data could not be read ({} bytes)", path, held);
  Tensor out(descr.dtype, shape);
  const char* data = bytes.data();
  if (descr.file_bytes == 8 && descr.dtype == DType::f32) {  // f64 narrowed to f32
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      double v;
      std::memcpy(&v, data + i * 8, 8);
      out.set(i, v);
    }
  } else if (descr.dtype == DType::b8) {
    for (std::int64_t i = 0; i < out.numel(); ++i) out.set(i, data[i] != 0 ? 1.0 : 0.0);
  } else if (expected > 0) {
    std::memcpy(out.raw(), data, static_cast<std::size_t>(expected));
  }
  return out;
}

void write(const std::string& path, const Tensor& tensor) {
  const char* descr = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == tensor.dtype() && d.file_bytes == dtype_size(tensor.dtype()) &&
        d.text[0] != '=') {
      descr = d.text;
      break;
    }
  }
  CPLAB_CHECK(descr != nullptr,
              "{}: {} has no .npy dtype cplab writes (f32, f16, i64, i32, u8, b8)", path,
              tensor_brief(tensor));
  std::vector<std::string> dims;
  for (std::int64_t d : tensor.shape()) dims.push_back(std::to_string(d));
  const std::string shape =
      dims.size() == 1 ? dims[0] + "," : fmt::format("{}", fmt::join(dims, ", "));
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // Magic, version, length, header and its newline together a multiple of 64 bytes.
  const std::size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  CPLAB_CHECK(out.good(), "{}: cannot create the .npy file", path);
  out.write(kMagic, kMagicLen);
  out.put(1);
  out.put(0);
  out.put(static_cast<char>(header.size() & 0xff));
  out.put(static_cast<char>(header.size() >> 8));
  out << header;
  out.write(reinterpret_cast<const char*>(tensor.raw()),
            static_cast<std::streamsize>(tensor.nbytes()));
  CPLAB_CHECK(out.good(), "{}: writing the .npy file failed", path);
}

}  // namespace cplab::io::npy
