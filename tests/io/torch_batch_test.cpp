// Batch files written with torch.save come back as the same Batch; bad files are one clear error.
#include "io/torch_batch.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace cplab::io {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("cplab_io_" + name)).string();
}

Batch packed_batch() {
  Batch b;
  std::vector<std::int64_t> ids(2 * 12), labels(2 * 12);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<std::int64_t>(7 * i % 50);
    labels[i] = i % 5 == 0 ? kIgnoreIndex : static_cast<std::int64_t>(i);
  }
  b.add(keys::input_ids, Tensor::from<std::int64_t>({2, 12}, ids));
  b.add(keys::labels, Tensor::from<std::int64_t>({2, 12}, labels));
  std::vector<float> feature(2 * 12 * 3);
  for (std::size_t i = 0; i < feature.size(); ++i) feature[i] = 0.5f * static_cast<float>(i);
  b.tokens["token_feature"] =
      TokenField{Tensor::from<float>({2, 12, 3}, feature), 1, PadRule::constant, 0.0};
  b.passthrough["image"] = Tensor::from<float>({1, 2, 2}, std::vector<float>{1, 2, 3, 4});
  b.seq_lens = {{5, 3, 4}, {12}};
  return b;
}

TEST(TorchBatch, RoundTripKeepsEveryTensorAndTheDocuments) {
  if (!torch_available()) GTEST_SKIP() << "skipped: built without libtorch";
  const Batch original = packed_batch();
  const std::string path = temp_path("roundtrip.pt");
  save_torch_batch(original, path);
  const Batch loaded = load_torch_batch(path);
  std::filesystem::remove(path);
  ASSERT_EQ(loaded.tokens.size(), original.tokens.size());
  for (const auto& [name, field] : original.tokens) {
    ASSERT_TRUE(loaded.has(name)) << name;
    EXPECT_TRUE(loaded.at(name) == field.value) << name;
    EXPECT_EQ(loaded.tokens.at(name).seq_dim, field.seq_dim) << name;
  }
  ASSERT_EQ(loaded.passthrough.size(), 1u);
  EXPECT_TRUE(loaded.passthrough.at("image") == original.passthrough.at("image"));
  EXPECT_EQ(loaded.seq_lens, original.seq_lens);
  EXPECT_EQ(loaded.tokens.at(keys::labels).pad_value, static_cast<double>(kIgnoreIndex));
}

TEST(TorchBatch, GarbageFileIsOneClearError) {
  if (!torch_available()) GTEST_SKIP() << "skipped: built without libtorch";
  const std::string path = temp_path("garbage.pt");
  { std::ofstream(path) << "this is not a pickle"; }
  try {
    load_torch_batch(path);
    FAIL() << "garbage was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a torch.save file"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(TorchBatch, MissingFileNamesThePath) {
  try {
    load_torch_batch("/nonexistent/cplab_batch.pt");
    FAIL() << "missing file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cplab_batch.pt"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cplab::io
