// The checks on maps handed to shared code: find_map_fault names the first entry out of range or
// repeated; the token moves refuse such maps before a byte moves; check_recorded_layout refuses a
// recorded layout whose arrays are short, whose index map runs past L, repeats a slot or names a
// negative one, or whose bounds do not rise inside their stream.
#include "core/map_checks.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "core/error.hpp"
#include "core/shard_layout.hpp"
#include "core/token_moves.hpp"

namespace cplab {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

void expect_contains(const std::string& message, std::initializer_list<const char*> parts) {
  EXPECT_FALSE(message.empty()) << "expected an error";
  for (const char* part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << part << "\n  in: " << message;
}

TEST(MapChecks, FindsTheFirstEntryOutOfRangeOrRepeated) {
  const std::vector<std::int64_t> good = {3, 0, 2, 1};
  EXPECT_FALSE(find_map_fault(good, 0, 4, true));
  const MapFault past = find_map_fault(std::vector<std::int64_t>{0, 4, 1}, 0, 4, true);
  EXPECT_EQ(past.at, 1);
  EXPECT_EQ(past.value, 4);
  EXPECT_FALSE(past.repeated);
  EXPECT_EQ(describe_map_fault(past, 0, 4), "entry 1 is 4, outside [0, 4)");
  const MapFault twice = find_map_fault(std::vector<std::int64_t>{2, 0, 2}, 0, 4, true);
  EXPECT_EQ(twice.at, 2);
  EXPECT_TRUE(twice.repeated);
  EXPECT_EQ(describe_map_fault(twice, 0, 4), "entry 2 is 2, a slot an earlier entry already names");
  EXPECT_FALSE(find_map_fault(std::vector<std::int64_t>{2, 0, 2}, 0, 4, false));
  // -1 ("none") may repeat where it is allowed; -2 never is.
  EXPECT_FALSE(find_map_fault(std::vector<std::int64_t>{-1, 1, -1}, -1, 4, true));
  EXPECT_EQ(find_map_fault(std::vector<std::int64_t>{-1, -2}, -1, 4, false).at, 1);
  // The bitmap is the thread's: a later, shorter map is checked afresh.
  EXPECT_FALSE(find_map_fault(std::vector<std::int64_t>{1, 0}, 0, 2, true));
}

Tensor row_of(std::int64_t n) {
  Tensor t(DType::f32, {1, n, 2});
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, static_cast<double>(i));
  return t;
}

TEST(MapChecks, TokenMovesRefuseWrongMapsBeforeMovingAByte) {
  const Tensor in = row_of(4);
  expect_contains(error_of([&] {
                    take_tokens(in, 1, {{0, 1, 4}}, 3);
                  }),
                  {"take_tokens: row 0 map: entry 2 is 4, outside [-1, 4)"});
  expect_contains(error_of([&] {
                    take_tokens(in, 1, {{0, -2, 1}}, 3);
                  }),
                  {"take_tokens: row 0 map: entry 1 is -2, outside [-1, 4)"});
  Tensor out = row_of(4);
  const Tensor before = out;
  expect_contains(error_of([&] {
                    put_tokens(in, 1, {{0, 1, 2, 4}}, out);
                  }),
                  {"put_tokens: row 0 map: entry 3 is 4, outside [0, 4)"});
  expect_contains(error_of([&] {
                    put_tokens(in, 1, {{-1, 1, 2, 3}}, out);
                  }),
                  {"put_tokens: row 0 map: entry 0 is -1, outside [0, 4)"});
  EXPECT_TRUE(out == before) << "a refused put wrote into its output";
  expect_contains(error_of([&] {
                    place_tokens(in, 1, {{0, 1, 1, 3}}, 4);
                  }),
                  {"place_tokens: row 0 map: entry 2 is 1, a slot an earlier entry already names"});
  EXPECT_TRUE(error_of([&] { place_tokens(in, 1, {{0, 1, 2, 5}}, 6); }).empty());
  expect_contains(error_of([&] {
                    place_tokens(in, 1, {{0, 1, 2, 6}}, 6);
                  }),
                  {"place_tokens: row 0 map: entry 3 is 6, outside [0, 6)"});
}

// Rank 1 of 2 over L = 8, one row: ℓ = 4 slots. The checks judge the recorded maps alone, never
// the layout's name: the record names none of the registered layouts.
ShardLayout good_layout() {
  ShardLayout l;
  l.layout = "hand-written";
  l.cp = 2;
  l.rank = 1;
  l.padded_len = 8;
  l.caller_len = 6;
  l.rows = 1;
  l.index = {{2, 3, 4, 5}};
  l.caller_pos = {{2, 3, 4, 5}};
  l.positions = {{2, 3, 4, 5}};
  l.doc_ids = {{1, 1, 1, 1}};
  l.real = {{1, 1, 1, 1}};
  l.valid_tokens = {4};
  return l;
}

TEST(MapChecks, ARecordedLayoutIsCheckedWhole) {
  EXPECT_TRUE(error_of([] { check_recorded_layout(good_layout(), "verb"); }).empty());
  expect_contains(error_of([] { check_recorded_layout(ShardLayout{}, "verb"); }),
                  {"verb: no recorded layout", "shard a batch first"});
  const auto broken = [](const std::function<void(ShardLayout&)>& edit) {
    ShardLayout l = good_layout();
    edit(l);
    return error_of([&] { check_recorded_layout(l, "verb"); });
  };
  expect_contains(broken([](ShardLayout& l) { l.index[0][3] = 8; }),
                  {"verb: rank 1 row 0: index map: entry 3 is 8, outside [0, 8)"});
  expect_contains(broken([](ShardLayout& l) { l.index[0][0] = -1; }),
                  {"verb: rank 1 row 0: index map: entry 0 is -1, outside [0, 8)"});
  expect_contains(broken([](ShardLayout& l) { l.index[0][3] = 2; }),
                  {"verb: rank 1 row 0: index map: entry 3 is 2, a slot an earlier entry"});
  expect_contains(broken([](ShardLayout& l) { l.caller_pos[0][1] = 6; }),
                  {"rank 1 row 0: caller positions: entry 1 is 6, outside [-1, 6)"});
  expect_contains(broken([](ShardLayout& l) { l.doc_ids[0].pop_back(); }),
                  {"rank 1 row 0: the document ids has 3 entries for ℓ = L/C = 8/2 = 4"});
  expect_contains(broken([](ShardLayout& l) { l.real.clear(); }),
                  {"rank 1 records 0 rows of the real-token flags, the layout has B=1"});
  expect_contains(broken([](ShardLayout& l) { l.rank = 2; }), {"rank must lie in [0, C)"});
  expect_contains(broken([](ShardLayout& l) { l.padded_len = 7; }), {"a multiple of C"});
  expect_contains(broken([](ShardLayout& l) {
                    l.cu_seqlens = {{0, 3, 5}};
                  }),
                  {"local cu_seqlens [0,3,5] must rise from 0 to at most 4"});
  expect_contains(broken([](ShardLayout& l) {
                    l.cu_seqlens_padded = {{0, 6, 4}};
                  }),
                  {"document bounds [0,6,4] must rise"});
  expect_contains(broken([](ShardLayout& l) {
                    l.varlen = {VarlenSegments{
                        .cu_seqlens_q = {0, 4}, .cu_seqlens_k = {0, 9}, .k_begin = 0, .k_end = 6}};
                  }),
                  {"cu_seqlens_k [0,9] must rise from 0 to at most 6"});
  expect_contains(broken([](ShardLayout& l) {
                    l.varlen = {VarlenSegments{
                        .cu_seqlens_q = {0, 4}, .cu_seqlens_k = {0, 2}, .k_begin = 4, .k_end = 9}};
                  }),
                  {"varlen key slice [4, 9) of L=8"});
}

}  // namespace
}  // namespace cplab
