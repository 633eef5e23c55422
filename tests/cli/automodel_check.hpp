#pragma once
// `cplab check` on the files Automodel's sharders write (automodel_fixtures.hpp), for the tests of
// the layouts those sharders follow (layouts/thd_test.cpp, layouts/head_tail_test.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "io/torch_batch.hpp"
#include "tests/cli/automodel_fixtures.hpp"
#include "tests/cli/check_run.hpp"
#include "tests/support/cli.hpp"

namespace cplab::testing::automodel {

class AutomodelCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!io::torch_available()) GTEST_SKIP() << "skipped: this cplab reads no torch.save files";
  }

  // Saves the files as they are and runs `cplab check` on them (`--json` unless `text`).
  CheckRun check(const Files& files, const std::string& layout, const std::string& extra = "",
                 bool text = false) {
    io::save_torch_dict(files.batch, dir.file("global.pt"));
    std::string paths;
    for (std::size_t r = 0; r < files.ranks.size(); ++r) {
      const std::string path = dir.file("rank" + std::to_string(r) + ".pt");
      io::save_torch_dict(files.ranks[r], path);
      paths += " " + path;
    }
    const auto run =
        testsupport::run_cplab(extra + " check" + (text ? "" : " --json") + " --batch " +
                               dir.file("global.pt") + " --shards" + paths + " --cp " +
                               std::to_string(files.ranks.size()) + " --layout " + layout);
    CheckRun out{run.status, nlohmann::json::object(), run.err};
    if (text) {
      out.out = run.out;
    } else if (!run.out.empty()) {
      out.out = nlohmann::json::parse(run.out);
    }
    return out;
  }

  testsupport::ScratchDir dir;
};

}  // namespace cplab::testing::automodel
