#include "gpu/impl/device_layout.hpp"

#include "core/error.hpp"
#include "gpu/kernels/index_map.hpp"
#include "gpu/kernels/partition_tokens.hpp"

namespace cplab::gpu {
namespace {

template <typename T>
void expect_equal(const std::vector<T>& device, const std::vector<T>& recorded,
                  const ShardLayout& layout, std::int64_t rank, const char* what) {
  for (std::size_t k = 0; k < device.size(); ++k) {
    CPLAB_CHECK(device[k] == recorded[k],
                "gpu: the device's {} of {} cp={} rank {} disagrees with the recorded partition at "
                "local token {}: "
                "device {}, recorded {}",
                what, layout.layout, layout.cp, rank, k, device[k], recorded[k]);
  }
}

// The map every row of the layout shares (checked), from what the partition recorded.
sim::LayoutMap recorded_map(const ShardLayout& layout) {
  CPLAB_CHECK(layout.rows >= 1 && static_cast<std::int64_t>(layout.index.size()) == layout.rows,
              "gpu: no recorded layout ({} rows, {} index maps); shard a batch first", layout.rows,
              layout.index.size());
  for (std::int64_t b = 1; b < layout.rows; ++b) {
    CPLAB_CHECK(layout.index[b] == layout.index[0],
                "gpu: rows 0 and {} of one microbatch have different index maps", b);
  }
  return sim::LayoutMap::of(layout, 0);
}

}  // namespace

DeviceLayout::DeviceLayout(const ShardLayout& layout, std::int64_t rank, Stream stream,
                           const std::vector<std::int64_t>* doc_lens)
    : map_(recorded_map(layout)) {
  const std::int64_t local = layout.local_len();
  host_ = map_.view();
  validate_map(host_, "gpu layout");
  d_table_ = upload_vector(map_.params().table, stream);
  d_aux_ = upload_vector(map_.aux(), stream);
  device_ = host_;
  device_.table = d_table_.as<std::int64_t>();
  device_.aux = d_aux_.as<std::int64_t>();

  index_ = DeviceBuffer(static_cast<std::size_t>(local) * sizeof(std::int64_t));
  index_map(device_, rank, 1, index_.as<std::int64_t>(), stream);
  expect_equal(download_vector<std::int64_t>(index_, static_cast<std::size_t>(local), stream),
               layout.index[0], layout, rank, "closed-form index map");

  // A re-laid packed row: every slot lies in a document, so the device derives every token's
  // position, document and realness from the map and the document bounds alone.
  const bool relaid =
      layout.packed && layout.cp > 1 && map_.layout().padding.document_unit != nullptr;
  if (relaid && doc_lens != nullptr) {
    CPLAB_CHECK(!layout.cu_seqlens_padded.empty(), "gpu: a packed layout without document bounds");
    const std::vector<std::int64_t>& bounds = layout.cu_seqlens_padded[0];
    const auto n_docs = static_cast<std::int64_t>(bounds.size()) - 1;
    CPLAB_CHECK(static_cast<std::int64_t>(doc_lens->size()) == n_docs,
                "gpu: {} document lengths for {} documents", doc_lens->size(), n_docs);
    const DeviceBuffer lens = upload_vector(*doc_lens, stream),
                       d_bounds = upload_vector(bounds, stream);
    DeviceBuffer slots(static_cast<std::size_t>(local) * 8),
        positions(static_cast<std::size_t>(local) * 8), docs(static_cast<std::size_t>(local) * 4),
        real(static_cast<std::size_t>(local));
    partition_tokens({.map = device_,
                      .rank = rank,
                      .doc_bounds = d_bounds.as<std::int64_t>(),
                      .doc_lens = lens.as<std::int64_t>(),
                      .n_docs = n_docs},
                     {.index = slots.as<std::int64_t>(),
                      .positions = positions.as<std::int64_t>(),
                      .doc_ids = docs.as<std::int32_t>(),
                      .real = real.as<std::uint8_t>()},
                     stream);
    const auto n = static_cast<std::size_t>(local);
    expect_equal(download_vector<std::int64_t>(slots, n, stream), layout.index[0], layout, rank,
                 "partition slots");
    expect_equal(download_vector<std::int64_t>(positions, n, stream), layout.positions[0], layout,
                 rank, "partition positions");
    expect_equal(download_vector<std::int32_t>(docs, n, stream), layout.doc_ids[0], layout, rank,
                 "document ids");
    expect_equal(download_vector<std::uint8_t>(real, n, stream), layout.real[0], layout, rank,
                 "real flags");
  }
}

}  // namespace cplab::gpu
