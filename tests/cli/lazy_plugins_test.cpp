// What a command costs before it does anything: commands that read no torch.save file never load
// libtorch (its plugin is opened on first use, io/plugin_library.hpp); a missing plugin is one
// line and exit 2; and the answers that now go through summaries and the direct JSON writer are
// the bytes they were (golden files written by the build before both changes).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/batch.hpp"
#include "core/standard_keys.hpp"
#include "io/torch_batch.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/layouts.hpp"

namespace cplab {
namespace {

using testsupport::run_cplab;
using testsupport::slurp;

struct Listed {
  testsupport::CliRun run;
  std::string libraries;  // what the dynamic loader wrote while the command ran
};

// `cplab <args>` with the dynamic loader listing every library it opens, into files of a folder of
// its own (LD_DEBUG_OUTPUT; the shell that starts cplab writes one too), read back and removed.
Listed run_listing_libraries(const std::string& args) {
  const std::filesystem::path folder = ::testing::TempDir() + "lazy_plugins_ld_debug";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  ::setenv("LD_DEBUG", "files", 1);
  ::setenv("LD_DEBUG_OUTPUT", (folder / "ld").c_str(), 1);
  Listed listed{run_cplab(args), ""};
  ::unsetenv("LD_DEBUG");
  ::unsetenv("LD_DEBUG_OUTPUT");
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    listed.libraries += slurp(entry.path().string());
  std::filesystem::remove_all(folder);
  return listed;
}

bool opened(const Listed& listed, const std::string& library) {
  return listed.libraries.find(library) != std::string::npos;
}

TEST(LazyPlugins, HelpAndLayoutLoadNoTorch) {
  const std::string layout = "--layout " + testsupport::a_plain_layout();
  for (const std::string& args :
       {std::string("--help"), "layout " + layout + " --cp 4 --seq-len 64 --json",
        std::string("layout --layout all --cp 2 --seq-len 16"),
        "explain " + layout + " --cp 2 --seq-len 8"}) {
    const Listed listed = run_listing_libraries(args);
    ASSERT_EQ(listed.run.status, 0) << args << "\n" << listed.run.err;
    // The listing works (libfmt is linked into cplab) and names neither libtorch nor its plugin.
    EXPECT_TRUE(opened(listed, "libfmt")) << args;
    EXPECT_FALSE(opened(listed, "libtorch")) << args;
    EXPECT_FALSE(opened(listed, "libcplab_torch_io")) << args;
  }
}

#ifdef CPLAB_TEST_HAVE_TORCH
std::string small_batch_file() {
  const std::string path = ::testing::TempDir() + "lazy_plugins_batch.pt";
  Batch batch;
  batch.add(keys::input_ids, Tensor::from<std::int64_t>({1, 8}, {1, 2, 3, 4, 5, 6, 7, 8}));
  batch.add(keys::labels, Tensor::from<std::int64_t>({1, 8}, {2, 3, 4, 5, 6, 7, 8, -100}));
  io::save_torch_batch(batch, path);
  return path;
}

TEST(LazyPlugins, ReadingABatchOpensTheTorchPlugin) {
  const Listed listed = run_listing_libraries("layout --layout " + testsupport::a_plain_layout() +
                                              " --cp 2 --json --batch " + small_batch_file());
  ASSERT_EQ(listed.run.status, 0) << listed.run.err;
  EXPECT_TRUE(opened(listed, "libcplab_torch_io.so"));
  EXPECT_TRUE(opened(listed, "libtorch"));
}

TEST(LazyPlugins, AMissingPluginIsOneLineAndExitTwo) {
  const std::string batch = small_batch_file();
  const std::string empty = ::testing::TempDir() + "lazy_plugins_none";
  std::filesystem::create_directories(empty);
  ::setenv("CPLAB_PLUGIN_DIR", empty.c_str(), 1);
  const testsupport::CliRun run =
      run_cplab("layout --layout " + testsupport::a_plain_layout() + " --cp 2 --batch " + batch);
  ::unsetenv("CPLAB_PLUGIN_DIR");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(testsupport::line_count(run.err), 1) << run.err;
  EXPECT_NE(run.err.find("cannot read '" + batch + "'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("needs the plugin libcplab_torch_io.so, which is missing"),
            std::string::npos)
      << run.err;
  EXPECT_TRUE(run.out.empty());
}

// A file of the plugin's name that is not the plugin: one line, exit 2, naming why it cannot be
// used, and never a crash or a wait. The real plugin cut short inside its code (or to its ELF
// header alone) once ended in SIGBUS as the loader touched pages past the file's end; a FIFO of
// that name made dlopen wait for a writer forever.
TEST(LazyPlugins, APluginThatIsNotOneIsOneLineAndExitTwo) {
  const std::string batch = small_batch_file();
  const std::string dir = ::testing::TempDir() + "lazy_plugins_wrong";
  std::filesystem::create_directories(dir);
  const std::string plugin = dir + "/libcplab_torch_io.so";
  const std::string real =
      (std::filesystem::path(testsupport::cplab_binary()).parent_path() / "libcplab_torch_io.so")
          .string();
  ASSERT_TRUE(std::filesystem::exists(real)) << real;
  const std::string whole = slurp(real);
  struct Wrong {
    std::string bytes;  // the file's contents; "fifo": a FIFO of that name
    const char* source;
    const char* why;
  };
  const Wrong wrongs[] = {
      {"", "", "not an ELF shared object"},
      {"", "/usr/lib/x86_64-linux-gnu/libm.so.6", "has no entry cplab_torch_io_table"},
      {whole.substr(0, 64), "", "cut short (64 bytes) before its program headers end"},
      {whole.substr(0, whole.size() / 2), "", "cut short"},
      {whole.substr(0, whole.size() - 1), "", "cut short"},
      {"fifo", "", "not a regular file"}};
  for (const Wrong& wrong : wrongs) {
    SCOPED_TRACE(wrong.why);
    std::filesystem::remove(plugin);
    if (*wrong.source != '\0') {
      if (!std::filesystem::exists(wrong.source)) continue;
      std::filesystem::copy_file(wrong.source, plugin);
    } else if (wrong.bytes == "fifo") {
      ASSERT_EQ(::mkfifo(plugin.c_str(), 0600), 0);
    } else {
      std::ofstream(plugin, std::ios::binary) << wrong.bytes;
    }
    ::setenv("CPLAB_PLUGIN_DIR", dir.c_str(), 1);
    const testsupport::CliRun run =
        run_cplab("layout --layout " + testsupport::a_plain_layout() + " --cp 2 --batch " + batch);
    ::unsetenv("CPLAB_PLUGIN_DIR");
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(testsupport::line_count(run.err), 1) << run.err;
    EXPECT_NE(run.err.find(wrong.why), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty());
  }
  std::filesystem::remove(plugin);
}
#endif

struct Golden {
  const char* file;
  const char* args;
};

TEST(LazyPlugins, SummariesAndDirectJsonKeepTheBytes) {
  const Golden goldens[] = {
      {"layout_all_cp4_s37.txt", "layout --layout all --cp 4 --seq-len 37"},
      {"layout_all_cp4_s64.json", "layout --layout all --cp 4 --seq-len 64 --json"},
      {"layout_all_cp2_docs.json", "layout --layout all --cp 2 --doc-lens 5,3,8,0,11 --json"},
      {"explain_all_cp4_docs.txt", "explain --layout all --cp 4 --doc-lens 5,3,8,0,11"},
  };  // one layout's own JSON: its file's (layouts/head_tail_test.cpp)
  for (const Golden& g : goldens) {
    const testsupport::CliRun run = run_cplab(g.args);
    ASSERT_EQ(run.status, 0) << g.args << ": " << run.err;
    EXPECT_EQ(run.out, slurp(std::string(CPLAB_TEST_GOLDEN_DIR) + "/" + g.file)) << g.args;
  }
}

}  // namespace
}  // namespace cplab
