// The index-map kernels against the reference's maps (built by construction), the partition
// kernel of re-laid rows, the trim's inverse, the device-sim reduction and continued positions.
#include <cmath>

#include "gpu/host/pad_anchors.hpp"
#include "gpu/kernels/gather_tokens.hpp"
#include "gpu/kernels/index_map.hpp"
#include "gpu/kernels/pad_positions.hpp"
#include "gpu/kernels/partition_tokens.hpp"
#include "gpu/kernels/reduce_elementwise.hpp"
#include "gpu_test.hpp"
#include "layouts/layout_map.hpp"
#include "layouts/magi.hpp"
#include "layouts/ptrr.hpp"
#include "layouts/usp.hpp"
#include "reference/plan.hpp"
#include "tests/support/layouts.hpp"

namespace cplab::gputest {
namespace {

using gpu::DeviceBuffer;
using Ints = std::vector<std::int64_t>;

class IndexKernels : public GpuTest {};

// The device maps of one reference row: index_map for every rank and owner_map, checked. The map
// is the one LayoutMap, from the parameters the reference's construction recorded.
void expect_maps_match(const LayoutSpec& spec, const RowPlan& row) {
  SCOPED_TRACE(::testing::Message() << spec.layout << " cp " << row.cp << " L " << row.padded_len);
  const sim::LayoutMap layout_map(sim::layout_descriptor(spec.layout), row.cp, row.padded_len,
                                  row.map);
  const DeviceBuffer table = gpu::upload_vector(layout_map.params().table, nullptr),
                     aux = gpu::upload_vector(layout_map.aux(), nullptr);
  gpu::MapView map = layout_map.view();
  map.table = table.as<std::int64_t>();
  map.aux = aux.as<std::int64_t>();
  const auto len = static_cast<std::size_t>(row.padded_len);
  DeviceBuffer index(len * 8), owner(len * 8);
  gpu::index_map(map, 0, row.cp, index.as<std::int64_t>(), nullptr);
  gpu::owner_map(map, owner.as<std::int64_t>(), nullptr);
  const Ints all = fetch<std::int64_t>(index, len), inverse = fetch<std::int64_t>(owner, len);
  const std::int64_t local = row.local_len();
  for (std::int64_t r = 0; r < row.cp; ++r) {
    for (std::int64_t k = 0; k < local; ++k) {
      ASSERT_EQ(all[r * local + k], row.index[r][k]) << "rank " << r << " k " << k;
      ASSERT_EQ(inverse[row.index[r][k]], r * local + k) << "slot " << row.index[r][k];
    }
  }
}

TEST_F(IndexKernels, every_layouts_maps_equal_the_reference_construction) {
  const std::vector<Ints> doc_sets = {{5, 3, 8}, {0, 7, 1, 0, 9}, {4, 12}, {1}};
  for (const auto& [layout, cp] : testsupport::layouts_at({1, 2, 3, 4, 8})) {
    LayoutSpec spec;
    spec.layout = layout;
    spec.cp = cp;
    layouts::magi_chunk_size.set(spec, 3);
    layouts::ptrr_block_size.set(spec, 1);
    // The rows nearest to these that the layout takes (the acceptance contract).
    if (testsupport::takes_rows(layout, false))
      expect_maps_match(spec, reference::plan_row(spec, sim::nearest_accepted_len(spec, 37)));
    if (testsupport::takes_rows(layout, true)) {
      for (const Ints& docs : doc_sets) {
        const sim::RowShape row = sim::nearest_accepted(spec, sim::packed_row(docs, 21));
        expect_maps_match(spec, reference::plan_row(spec, row.seq_len, &docs, &row.documents));
      }
    }
  }
}

// The two-level ring degrees (usp's option; the other layouts ignore it) on the device too.
TEST_F(IndexKernels, every_layouts_maps_at_two_level_ring_degrees_equal_the_reference) {
  for (const auto& [layout, cp] : testsupport::layouts_at({4, 6, 8})) {
    for (std::int64_t ring = 2; ring < cp; ++ring) {
      if (cp % ring != 0 || !testsupport::takes_rows(layout, false)) continue;
      LayoutSpec spec;
      spec.layout = layout;
      spec.cp = cp;
      layouts::usp_ring_degree.set(spec, ring);
      expect_maps_match(spec, reference::plan_row(spec, 37));
    }
  }
}

// Every layout that re-lays documents: the device partition's positions, documents and real flags.
TEST_F(IndexKernels, relaid_partition_gives_the_reference_positions_documents_and_real_flags) {
  for (const auto& [layout, cp] : testsupport::layouts_at({2, 3, 4})) {
    if (!testsupport::relays_documents(layout, cp)) continue;
    for (const Ints& docs : std::vector<Ints>{{5, 3, 8}, {0, 7, 1, 0, 9}, {2}}) {
      LayoutSpec spec;
      spec.layout = layout;
      spec.cp = cp;
      const RowPlan row = reference::plan_row(spec, 21, &docs);
      const sim::LayoutMap layout_map(sim::layout_descriptor(layout), cp, row.padded_len, row.map);
      const DeviceBuffer cu = gpu::upload_vector(row.cu_seqlens_padded, nullptr),
                         lens = gpu::upload_vector(docs, nullptr),
                         table = gpu::upload_vector(layout_map.params().table, nullptr),
                         aux = gpu::upload_vector(layout_map.aux(), nullptr);
      gpu::MapView map = layout_map.view();
      map.table = table.as<std::int64_t>();
      map.aux = aux.as<std::int64_t>();
      const auto local = static_cast<std::size_t>(row.local_len());
      for (std::int64_t r = 0; r < cp; ++r) {
        DeviceBuffer index(local * 8), positions(local * 8), doc_ids(local * 4), real(local);
        gpu::partition_tokens({.map = map,
                               .rank = r,
                               .doc_bounds = cu.as<std::int64_t>(),
                               .doc_lens = lens.as<std::int64_t>(),
                               .n_docs = static_cast<std::int64_t>(docs.size())},
                              {index.as<std::int64_t>(), positions.as<std::int64_t>(),
                               doc_ids.as<std::int32_t>(), real.as<std::uint8_t>()},
                              nullptr);
        const Ints slot = fetch<std::int64_t>(index, local),
                   pos = fetch<std::int64_t>(positions, local);
        const auto doc = fetch<std::int32_t>(doc_ids, local);
        const auto is_real = fetch<std::uint8_t>(real, local);
        for (std::size_t k = 0; k < local; ++k) {
          const std::int64_t g = row.index[r][k];
          ASSERT_EQ(slot[k], g);
          EXPECT_EQ(pos[k], row.positions[g]) << "cp " << cp << " rank " << r << " slot " << g;
          EXPECT_EQ(doc[k], row.doc_ids[g]) << "cp " << cp << " rank " << r << " slot " << g;
          EXPECT_EQ(is_real[k], row.real[g]) << "cp " << cp << " rank " << r << " slot " << g;
        }
      }
    }
  }
}

TEST_F(IndexKernels, invert_positions_finds_each_holder_and_reports_duplicates) {
  // Two rows of 6 gathered tokens over a caller length of 5; caller position 4 of row 1 unheld.
  const Ints positions = {2, -1, 0, 4, 1, 3, /* row 1 */ 3, 0, -1, -1, 1, 2};
  DeviceBuffer d_pos = gpu::upload_vector(positions, nullptr), inverse(2 * 5 * 8);
  const gpu::ErrorSlot bad(nullptr);
  gpu::invert_positions(d_pos.as<std::int64_t>(), 2, 6, inverse.as<std::int64_t>(), 5, bad.get(),
                        nullptr);
  EXPECT_EQ(fetch<std::int64_t>(inverse, 10), (Ints{2, 4, 0, 5, 3, /* row 1 */ 1, 4, 5, 0, -1}));
  EXPECT_EQ(bad.first_bad(nullptr), -1);

  const Ints twice = {0, 1, 1, 5};  // position 1 twice, 5 out of range
  DeviceBuffer d_twice = gpu::upload_vector(twice, nullptr), out(3 * 8);
  const gpu::ErrorSlot bad2(nullptr);
  gpu::invert_positions(d_twice.as<std::int64_t>(), 1, 4, out.as<std::int64_t>(), 3, bad2.get(),
                        nullptr);
  const std::int64_t first = bad2.first_bad(nullptr);
  EXPECT_TRUE(first == 1 || first == 2) << first;  // whichever of the two lost the race
}

TEST_F(IndexKernels, reduce_into_sums_and_maxes_every_supported_type) {
  const std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f}, b = {0.5f, 4.0f, -1.0f, -0.0f};
  DeviceBuffer da = gpu::upload_vector(a, nullptr), db = gpu::upload_vector(b, nullptr);
  gpu::reduce_into(da.get(), db.get(), 4, gpu::ReduceElem::f32, gpu::ReduceKind::sum, nullptr);
  EXPECT_EQ(fetch<float>(da, 4), (std::vector<float>{2.0f, 2.0f, 2.25f, 0.0f}));
  gpu::reduce_into(da.get(), db.get(), 4, gpu::ReduceElem::f32, gpu::ReduceKind::max, nullptr);
  EXPECT_EQ(fetch<float>(da, 4), (std::vector<float>{2.0f, 4.0f, 2.25f, 0.0f}));

  const Ints x = {1, -5, std::int64_t{1} << 40}, y = {2, -7, 3};
  DeviceBuffer dx = gpu::upload_vector(x, nullptr), dy = gpu::upload_vector(y, nullptr);
  gpu::reduce_into(dx.get(), dy.get(), 3, gpu::ReduceElem::i64, gpu::ReduceKind::sum, nullptr);
  EXPECT_EQ(fetch<std::int64_t>(dx, 3), (Ints{3, -12, (std::int64_t{1} << 40) + 3}));
  gpu::reduce_into(dx.get(), dy.get(), 3, gpu::ReduceElem::i64, gpu::ReduceKind::max, nullptr);
  EXPECT_EQ(fetch<std::int64_t>(dx, 3), (Ints{3, -7, (std::int64_t{1} << 40) + 3}));

  const std::vector<std::uint16_t> h = {0x3f80, 0x4000};  // bf16 1.0, 2.0
  DeviceBuffer dh = gpu::upload_vector(h, nullptr), dh2 = gpu::upload_vector(h, nullptr);
  gpu::reduce_into(dh.get(), dh2.get(), 2, gpu::ReduceElem::bf16, gpu::ReduceKind::sum, nullptr);
  EXPECT_EQ(fetch<std::uint16_t>(dh, 2), (std::vector<std::uint16_t>{0x4000, 0x4080}));  // 2.0, 4.0
  const std::vector<std::uint16_t> f16 = {0x3c00, 0xc000};  // f16 1.0, -2.0
  DeviceBuffer df = gpu::upload_vector(f16, nullptr), df2 = gpu::upload_vector(f16, nullptr);
  gpu::reduce_into(df.get(), df2.get(), 2, gpu::ReduceElem::f16, gpu::ReduceKind::sum, nullptr);
  EXPECT_EQ(fetch<std::uint16_t>(df, 2),
            (std::vector<std::uint16_t>{0x4000, 0xc400}));  // 2.0, -4.0
  const std::vector<std::int32_t> i = {7, -3};
  const std::vector<std::uint8_t> u = {200, 3};
  DeviceBuffer di = gpu::upload_vector(i, nullptr), di2 = gpu::upload_vector(i, nullptr);
  DeviceBuffer du = gpu::upload_vector(u, nullptr),
               du2 = gpu::upload_vector(std::vector<std::uint8_t>{100, 9}, nullptr);
  gpu::reduce_into(di.get(), di2.get(), 2, gpu::ReduceElem::i32, gpu::ReduceKind::sum, nullptr);
  gpu::reduce_into(du.get(), du2.get(), 2, gpu::ReduceElem::u8, gpu::ReduceKind::max, nullptr);
  EXPECT_EQ(fetch<std::int32_t>(di, 2), (std::vector<std::int32_t>{14, -6}));
  EXPECT_EQ(fetch<std::uint8_t>(du, 2), (std::vector<std::uint8_t>{200, 9}));
}

TEST_F(IndexKernels, continued_positions_follow_the_last_caller_token) {
  // One row, inner 2 (mRoPE-like), caller values 100+10c+e; stream slots 0..7, added slots 0, 4,
  // 6, 7.
  const Ints stream = {-1, 0, 1, 2, -1, 3, -1, -1};
  const Ints local = {0, 4, 5, 7};
  const gpu::PadAnchors anchors = gpu::continue_anchors(stream, local);
  std::vector<std::int64_t> src;
  for (std::int64_t c = 0; c < 4; ++c) {
    for (std::int64_t e = 0; e < 2; ++e) src.push_back(100 + 10 * c + e);
  }
  DeviceBuffer d_src = gpu::upload_vector(src, nullptr), dst(4 * 2 * 8);
  dst.fill_bytes(0, nullptr);
  DeviceBuffer anchor = gpu::upload_vector(anchors.anchor, nullptr),
               delta = gpu::upload_vector(anchors.delta, nullptr);
  gpu::continue_positions({.dst = dst.get(),
                           .src = d_src.get(),
                           .elem = gpu::PositionElem::i64,
                           .src_tokens = 4,
                           .local = 4,
                           .inner = 2,
                           .anchor = anchor.as<std::int64_t>(),
                           .delta = delta.as<std::int64_t>()},
                          nullptr);
  // slot 0: 0 (nothing before); slot 4: caller 2 (120+e) + 1; slot 5 is a caller token (left as
  // the copy wrote it: 0 here); slot 7: caller 3 (130+e) + 2.
  EXPECT_EQ(fetch<std::int64_t>(dst, 8), (Ints{0, 0, 121, 122, 0, 0, 132, 133}));
}

}  // namespace
}  // namespace cplab::gputest
