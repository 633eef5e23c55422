// Reading and matching benchmark results without running anything: the work of matching many
// entries (name comparisons, counted by the files' indexes), the rule for values that are not
// finite numbers, what is kept of a text that does not parse, and changes against a median of 0.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "perf/bench_compare.hpp"
#include "perf/bench_json.hpp"
#include "perf/bench_results.hpp"

namespace cplab::perf {
namespace {

std::string entry(const std::string& name, const std::string& real_time, const std::string& ratio) {
  return "{\"name\": \"" + name + "\", \"run_name\": \"" + name +
         "\", \"run_type\": \"iteration\", \"real_time\": " + real_time +
         ", \"time_unit\": \"ns\", \"ratio_to_baseline\": " + ratio + "}";
}

// `count` entries named by `name_of(i)`, each with the same time and ratio.
template <typename NameOf>
std::string results(std::size_t count, NameOf name_of, const std::string& ratio = "1.0") {
  std::string text = "{\"context\": {}, \"benchmarks\": [";
  for (std::size_t i = 0; i < count; ++i) {
    if (i) text += ",\n";
    text += entry(name_of(i), "100", ratio);
  }
  return text + "]}";
}

std::uint64_t matching_comparisons(const std::string& base_text, const std::string& new_text,
                                   std::size_t& rows) {
  const BenchFile base = read_bench_text(base_text, "base.json");
  const BenchFile now = read_bench_text(new_text, "new.json");
  rows = compare_files(base, now, {}).size();
  return base.index.comparisons() + now.index.comparisons();
}

TEST(BenchMatching, many_distinct_names_take_n_log_n_comparisons) {
  // Matching by a scan of the other file is n^2 / 2 = 5e8 comparisons here.
  const std::size_t n = 1 << 15;
  const auto name = [](std::size_t i) { return "BM_many/" + std::to_string(i); };
  std::size_t rows = 0;
  const std::uint64_t comparisons = matching_comparisons(results(n, name), results(n, name), rows);
  EXPECT_EQ(rows, n);
  const double n_log_n = static_cast<double>(n) * std::log2(static_cast<double>(n));
  EXPECT_LE(static_cast<double>(comparisons), 6.0 * n_log_n) << comparisons << " comparisons";
}

TEST(BenchMatching, many_repetitions_of_one_name_take_a_few_comparisons_each) {
  const std::size_t n = 1 << 16;
  const auto name = [](std::size_t) { return std::string("BM_one"); };
  std::size_t rows = 0;
  const std::uint64_t comparisons = matching_comparisons(results(n, name), results(n, name), rows);
  EXPECT_EQ(rows, 1u);
  EXPECT_LE(comparisons, 4 * n) << comparisons << " comparisons";
}

TEST(BenchMatching, names_only_in_one_file_are_listed_in_the_files_order) {
  const BenchFile base = read_bench_text(
      results(3, [](std::size_t i) { return "BM_" + std::to_string(i); }), "base.json");
  const BenchFile now = read_bench_text(
      results(3, [](std::size_t i) { return "BM_" + std::to_string(i + 1); }), "new.json");
  const std::vector<BenchChange> changes = compare_files(base, now, {});
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].name, "BM_0");
  EXPECT_EQ(changes[0].note, "only in the base");
  EXPECT_EQ(changes[1].name, "BM_1");
  EXPECT_TRUE(changes[1].note.empty());
  EXPECT_EQ(changes[3].name, "BM_3");
  EXPECT_EQ(changes[3].note, "only in the new");
}

TEST(BenchNonFinite, nan_and_infinity_are_read_as_missing_and_listed) {
  // As Google Benchmark 1.7.1 writes them, and as other writers do; inside strings they are text.
  const std::string text =
      "{\"context\": {\"note\": \"NaN, Infinity\"}, \"benchmarks\": [" +
      entry("BM_NaN", "100", "NaN") + ",\n" + entry("BM_NaN", "Infinity", "1.5") + ",\n" +
      entry("BM_NaN", "-Infinity", "-nan") + ",\n" + entry("BM_NaN", "200", "inf") + ",\n" +
      "{\"name\": \"BM_NaN_cv\", \"run_type\": \"aggregate\", \"page_faults\": NaN}]}";
  const BenchJson parsed = parse_bench_json(text);
  ASSERT_TRUE(parsed.complete) << parsed.error;
  EXPECT_EQ(parsed.non_finite, 6u);
  EXPECT_EQ(parsed.doc["context"]["note"], "NaN, Infinity");
  const BenchFile file = read_bench_text(text, "r.json");
  ASSERT_EQ(file.series.size(), 1u);
  const BenchSeries& s = file.series[0];
  EXPECT_EQ(s.repetitions, 4u);
  EXPECT_EQ(s.time_ns, (std::vector<double>{100.0, 200.0}));
  EXPECT_EQ(s.ratio, (std::vector<double>{1.5}));
  EXPECT_TRUE(s.reports_ratio);
  EXPECT_EQ(s.missing, 5u);
  EXPECT_EQ(file.missing.size(), 6u);
  EXPECT_EQ(file.missing.back(), "BM_NaN_cv: page_faults");
  const std::string said = describe_missing(file);
  EXPECT_NE(said.find("r.json: 6 values are not finite numbers"), std::string::npos) << said;
  EXPECT_NE(said.find("BM_NaN: ratio_to_baseline"), std::string::npos) << said;
}

TEST(BenchNonFinite, a_series_whose_values_are_all_missing_is_said_so_not_compared) {
  const std::string text = "{\"benchmarks\": [" + entry("BM_x", "NaN", "NaN") + "]}";
  const std::string fine = "{\"benchmarks\": [" + entry("BM_x", "100", "1.0") + "]}";
  const std::vector<BenchChange> changes =
      compare_files(read_bench_text(text, "a.json"), read_bench_text(fine, "b.json"), {});
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].note, "no finite time in the base (read as missing)");
  EXPECT_FALSE(changes[0].regression);
}

TEST(BenchSalvage, a_text_cut_inside_an_entry_keeps_the_whole_entries_before_it) {
  const std::string whole = entry("BM_a", "NaN", "1.0") + ",\n" + entry("BM_b", "2", "1.0");
  const std::string cut = "{\"name\": \"BM_c\", \"real_time\": 3, \"label\": \"x";
  const std::string text =
      "{\"context\": {\"date\": \"d\"}, \"benchmarks\": [" + whole + ",\n" + cut;
  const BenchJson parsed = parse_bench_json(text);
  EXPECT_FALSE(parsed.complete);
  EXPECT_EQ(parsed.inside, "BM_c");
  EXPECT_EQ(parsed.whole, 2u);
  // The offset is in the text as written (before NaN was read as null).
  EXPECT_EQ(parsed.offset, text.size());
  ASSERT_TRUE(parsed.doc["benchmarks"].is_array());
  ASSERT_EQ(parsed.doc["benchmarks"].size(), 2u);
  EXPECT_EQ(parsed.doc["benchmarks"][1]["name"], "BM_b");
  EXPECT_EQ(parsed.doc["context"]["date"], "d");
}

TEST(BenchSalvage, a_bad_byte_between_entries_names_no_entry) {
  const std::string head = "{\"benchmarks\": [" + entry("BM_a", "1", "1.0") + ", ";
  const BenchJson parsed = parse_bench_json(head + "?]}");
  EXPECT_FALSE(parsed.complete);
  EXPECT_EQ(parsed.inside, "");
  EXPECT_EQ(parsed.whole, 1u);
  EXPECT_EQ(parsed.offset, head.size());
  EXPECT_EQ(parsed.doc["benchmarks"].size(), 1u);
}

std::string repeated(const std::string& name, const std::vector<std::string>& ratios,
                     const std::string& time = "100") {
  std::string text = "{\"benchmarks\": [";
  for (std::size_t i = 0; i < ratios.size(); ++i)
    text += (i ? ",\n" : "") + entry(name, time, ratios[i]);
  return text + "]}";
}

TEST(BenchCompareZero, a_base_ratio_of_0_is_not_comparable_not_faster) {
  const BenchFile base = read_bench_text(repeated("BM_z", {"0", "0", "0", "0", "0"}), "b.json");
  const BenchFile now =
      read_bench_text(repeated("BM_z", {"1.02", "1.02", "1.03", "1.01", "1.02"}), "n.json");
  const std::vector<BenchChange> changes = compare_files(base, now, {});
  ASSERT_EQ(changes.size(), 1u);
  const BenchChange& c = changes[0];
  EXPECT_FALSE(c.comparable);
  EXPECT_FALSE(c.regression);
  EXPECT_EQ(c.verdict, "not comparable: the base median ratio is 0");
  // Nor the other way round, nor a time of 0.
  EXPECT_EQ(compare_files(now, base, {})[0].verdict, "not comparable: the new median ratio is 0");
  const std::string no_ratio = "{\"benchmarks\": [{\"name\": \"BM_t\", \"real_time\": 0}]}";
  const std::string timed = "{\"benchmarks\": [{\"name\": \"BM_t\", \"real_time\": 5}]}";
  EXPECT_EQ(
      compare_files(read_bench_text(no_ratio, "t0"), read_bench_text(timed, "t1"), {})[0].verdict,
      "not comparable: the base median time is 0");
}

TEST(BenchCompareZero, a_positive_base_still_gets_its_change_and_verdict) {
  const BenchFile base =
      read_bench_text(repeated("BM_z", {"1.00", "1.01", "0.99", "1.00", "1.01"}), "b.json");
  const BenchFile now =
      read_bench_text(repeated("BM_z", {"2.00", "2.02", "1.98", "2.00", "2.01"}), "n.json");
  const BenchChange c = compare_files(base, now, {})[0];
  EXPECT_TRUE(c.comparable);
  EXPECT_NEAR(c.change, 1.0, 1e-9);
  EXPECT_EQ(c.verdict, "faster");
  const BenchChange back = compare_files(now, base, {})[0];
  EXPECT_TRUE(back.regression);
  EXPECT_EQ(back.verdict, "REGRESSION");
}

}  // namespace
}  // namespace cplab::perf
