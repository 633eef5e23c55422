// The .npy reader and writer: every supported dtype round-trips; files laid out as NumPy writes
// them (versions 1.0 and 2.0, f8 narrowed to f32) are read; malformed or unsupported files are one
// clear error naming the file.
#include "io/npy.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/error.hpp"
#include "tests/support/cli.hpp"

namespace cplab::clitest {
namespace {

using testsupport::ScratchDir;

Tensor counting(DType dtype, Shape shape) {
  Tensor t(dtype, std::move(shape));
  for (std::int64_t i = 0; i < t.numel(); ++i)
    t.set(i, dtype == DType::b8 ? static_cast<double>(i % 3 == 0)
                                : static_cast<double>(i) - 3.0 * (dtype != DType::u8));
  return t;
}

TEST(Npy, every_written_dtype_round_trips) {
  ScratchDir dir;
  for (DType dtype : {DType::f32, DType::f16, DType::i64, DType::i32, DType::u8, DType::b8}) {
    for (const Shape& shape : {Shape{2, 3, 4}, Shape{5}, Shape{}, Shape{0, 3}}) {
      const Tensor t = counting(dtype, shape);
      io::npy::write(dir.file("t.npy"), t);
      EXPECT_TRUE(io::npy::read(dir.file("t.npy")) == t) << dtype_name(dtype) << shape_str(shape);
    }
  }
}

// A file byte for byte as NumPy lays it out: magic, version, little-endian header length, the
// header dict padded with spaces to a 64-byte boundary and ended by a newline, then the data.
void write_raw(const std::string& path, int major, const std::string& dict,
               const std::string& data) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY", 6);
  out.put(static_cast<char>(major));
  out.put(0);
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_bytes; ++i)
    out.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out << header << data;
}

template <typename T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

TEST(Npy, reads_numpy_layouts_of_versions_1_and_2_and_narrows_f64) {
  ScratchDir dir;
  write_raw(dir.file("a.npy"), 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }",
            bytes_of<std::int64_t>({0, 1, 2, 3, 4, -100}));
  const Tensor a = io::npy::read(dir.file("a.npy"));
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, -100}));
  write_raw(dir.file("b.npy"), 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
            bytes_of<double>({0.5, -1.25, 3.0}));
  const Tensor b = io::npy::read(dir.file("b.npy"));
  EXPECT_EQ(b.dtype(), DType::f32);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0.5f, -1.25f, 3.0f}));
  write_raw(dir.file("c.npy"), 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1, 3), }",
            std::string("\x01\x00\x01", 3));
  EXPECT_EQ(io::npy::read(dir.file("c.npy")).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
}

void expect_one_line_error(const std::string& path, const std::string& part) {
  try {
    io::npy::read(path);
    ADD_FAILURE() << "no error for " << path;
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(part), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Npy, malformed_and_unsupported_files_are_one_line_errors) {
  ScratchDir dir;
  const std::string four_floats = bytes_of<float>({1, 2, 3, 4});
  expect_one_line_error(dir.file("missing.npy"), "cannot open");
  std::ofstream(dir.file("text.npy")) << "just some text, long enough";
  expect_one_line_error(dir.file("text.npy"), "not a .npy file");
  write_raw(dir.file("short.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
            four_floats);
  expect_one_line_error(dir.file("short.npy"), "needs 20 bytes, the file holds 16");
  write_raw(dir.file("fortran.npy"), 1,
            "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", four_floats);
  expect_one_line_error(dir.file("fortran.npy"), "Fortran order");
  write_raw(dir.file("big.npy"), 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }",
            four_floats);
  expect_one_line_error(dir.file("big.npy"), "dtype '>f4' is not supported");
  write_raw(dir.file("complex.npy"), 1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }",
            four_floats);
  expect_one_line_error(dir.file("complex.npy"), "dtype '<c8' is not supported");
  write_raw(dir.file("shape.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
            four_floats);
  expect_one_line_error(dir.file("shape.npy"), "not a non-negative integer");
  write_raw(dir.file("nodescr.npy"), 1, "{'fortran_order': False, 'shape': (4,), }", four_floats);
  expect_one_line_error(dir.file("nodescr.npy"), "no 'descr' entry");
  write_raw(dir.file("version.npy"), 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }",
            four_floats);
  {
    std::fstream patch(dir.file("version.npy"), std::ios::in | std::ios::out | std::ios::binary);
    patch.seekp(6);
    patch.put(9);
  }
  expect_one_line_error(dir.file("version.npy"), "version 9.0 is not supported");
}

TEST(Npy, bf16_has_no_numpy_dtype) {
  ScratchDir dir;
  EXPECT_THROW(io::npy::write(dir.file("x.npy"), Tensor(DType::bf16, {2})), Error);
}

}  // namespace
}  // namespace cplab::clitest
