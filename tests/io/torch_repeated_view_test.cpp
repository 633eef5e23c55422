// A torch.save file can declare a view that repeats its storage: a few bytes of storage, sizes of
// 10^10 elements and stride 0 (what expand() saves). Its dense copy would be 80 GB; cplab refuses
// it from the declared sizes before anything is allocated, in both readers, while the expanded
// tensors real batches hold (position_ids as an expanded arange) are read as before. The
// fixtures are written here with libtorch's own torch.save writer.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "io/torch_batch.hpp"
#include "io/torch_tensors.hpp"

namespace cplab::io {
namespace {

std::string save(const c10::impl::GenericDict& root, const std::string& name) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("cplab_io_" + name + ".pt")).string();
  const std::vector<char> bytes = torch::jit::pickle_save(root);
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

c10::impl::GenericDict dict() {
  return c10::impl::GenericDict(c10::StringType::get(), c10::AnyType::get());
}

constexpr std::int64_t kDeclared = 10000000000;  // 10^10 elements, 8 bytes of storage

// What a reader threw: its message, and whether it was the refusal (cplab::Error) rather than an
// allocation that failed (ResourceError, std::bad_alloc) or none.
std::string refusal_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not refused, but: ") + e.what();
  }
  return "accepted";
}

TEST(TorchRepeatedView, ARepeatedViewIsRefusedFromItsDeclaredSizes) {
  c10::impl::GenericDict root = dict();
  root.insert("input_ids", at::zeros({1, 1}, at::kLong).expand({1, kDeclared}));
  root.insert("labels", at::zeros({1, 4}, at::kLong));
  const std::string path = save(root, "repeated_view");
  EXPECT_LT(std::filesystem::file_size(path), 2048u) << "the fixture is a small file";
  for (const auto& [reader, read] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"batch", [&] { load_torch_batch(path); }},
           {"tensors", [&] { load_torch_tensors(path); }}}) {
    const std::string message = refusal_of(read);
    EXPECT_NE(message.find("'input_ids' of sizes [1, 10000000000] would take 80000000000 bytes "
                           "copied out"),
              std::string::npos)
        << reader << ": " << message;
    EXPECT_NE(message.find("refused before allocating"), std::string::npos)
        << reader << ": " << message;
  }
  std::filesystem::remove(path);
}

TEST(TorchRepeatedView, PackedLengthsAreBoundedAsTheInt64sTheyBecome) {
  // seq_lens are read as int64 whatever their dtype: a uint8 view of 2^32 elements is 32 GiB then.
  c10::impl::GenericDict root = dict();
  root.insert("input_ids", at::zeros({1, 4}, at::kLong));
  root.insert("labels", at::zeros({1, 4}, at::kLong));
  root.insert("seq_lens", at::ones({1, 1}, at::kByte).expand({1, std::int64_t{1} << 32}));
  const std::string path = save(root, "repeated_seq_lens");
  const std::string message = refusal_of([&] { load_torch_batch(path); });
  EXPECT_NE(message.find("'seq_lens' of sizes [1, 4294967296] would take 34359738368 bytes"),
            std::string::npos)
      << message;
  std::filesystem::remove(path);
}

TEST(TorchRepeatedView, ExpandedPositionIdsOfARealBatchAreRead) {
  c10::impl::GenericDict root = dict();
  root.insert("input_ids", at::arange(16, at::kLong).reshape({2, 8}));
  root.insert("labels", at::arange(16, at::kLong).reshape({2, 8}));
  root.insert("position_ids", at::arange(8, at::kLong).expand({2, 8}));  // stride 0 over rows
  const std::string path = save(root, "expanded_positions");
  const Batch batch = load_torch_batch(path);
  const Tensor& positions = batch.at(keys::position_ids);
  ASSERT_EQ(positions.shape(), (Shape{2, 8}));
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(positions.get(i), static_cast<double>(i % 8));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cplab::io
