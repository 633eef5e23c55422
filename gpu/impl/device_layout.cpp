#include "gpu/impl/device_layout.hpp"

#include "gpu/host/magi_slots.hpp"
#include "gpu/kernels/index_map.hpp"
#include "gpu/kernels/partition_thd.hpp"
#include "reference/types/error.hpp"

namespace cplab::gpu {
namespace {

MapKind map_kind(const ShardLayout& layout) {
  // Every layout at C = 1 is the identity (SPEC §3), which is contiguous on one rank.
  if (layout.cp == 1 || layout.layout == "identity" || layout.layout == "contiguous")
    return MapKind::contiguous;
  if (layout.layout == "head-tail") return MapKind::head_tail;
  if (layout.layout == "thd") return MapKind::thd;
  if (layout.layout == "magi") return MapKind::magi;
  CPLAB_FAIL(
      "gpu: no device map for layout '{}'; supported: identity, contiguous, head-tail, thd, magi",
      layout.layout);
}

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

}  // namespace

DeviceLayout::DeviceLayout(const ShardLayout& layout, std::int64_t rank, Stream stream,
                           const std::vector<std::int64_t>* doc_lens) {
  const std::int64_t local = layout.local_len();
  CPLAB_CHECK(layout.rows >= 1 && static_cast<std::int64_t>(layout.index.size()) == layout.rows,
              "gpu: no recorded layout ({} rows, {} index maps); shard a batch first", layout.rows,
              layout.index.size());
  for (std::int64_t b = 1; b < layout.rows; ++b) {
    CPLAB_CHECK(layout.index[b] == layout.index[0],
                "gpu: rows 0 and {} of one microbatch have different index maps", b);
  }
  host_ = LayoutMapDesc{.kind = map_kind(layout), .cp = layout.cp, .padded_len = layout.padded_len};
  if (host_.kind == MapKind::thd) {
    CPLAB_CHECK(!layout.cu_seqlens_padded.empty(), "gpu: thd layout without cu_seqlens_padded");
    cu_padded_ = layout.cu_seqlens_padded[0];
    host_.cu_padded = cu_padded_.data();
    host_.n_docs = static_cast<std::int64_t>(cu_padded_.size()) - 1;
  } else if (host_.kind == MapKind::magi) {
    CPLAB_CHECK(!layout.magi_rank_chunks.empty(), "gpu: magi layout without a chunk assignment");
    rank_chunks_ = layout.magi_rank_chunks[0];
    chunk_slot_ = magi_chunk_slots(rank_chunks_, layout.cp);
    host_.chunk_size = layout.chunk_size;
    host_.rank_chunks = rank_chunks_.data();
    host_.chunk_slot = chunk_slot_.data();
  }
  validate_map(host_, "gpu layout");
  device_ = host_;
  d_cu_padded_ = upload_vector(cu_padded_, stream);
  d_rank_chunks_ = upload_vector(rank_chunks_, stream);
  d_chunk_slot_ = upload_vector(chunk_slot_, stream);
  device_.cu_padded = d_cu_padded_.as<std::int64_t>();
  device_.rank_chunks = d_rank_chunks_.as<std::int64_t>();
  device_.chunk_slot = d_chunk_slot_.as<std::int64_t>();

  index_ = DeviceBuffer(static_cast<std::size_t>(local) * sizeof(std::int64_t));
  index_map(device_, rank, 1, index_.as<std::int64_t>(), stream);
  expect_equal(download_vector<std::int64_t>(index_, static_cast<std::size_t>(local), stream),
               layout.index[0], layout, rank, "closed-form index map");

  if (host_.kind == MapKind::thd && doc_lens != nullptr) {
    CPLAB_CHECK(static_cast<std::int64_t>(doc_lens->size()) == host_.n_docs,
                "gpu: {} document lengths for {} documents", doc_lens->size(), host_.n_docs);
    const DeviceBuffer lens = upload_vector(*doc_lens, stream);
    DeviceBuffer slots(static_cast<std::size_t>(local) * 8),
        positions(static_cast<std::size_t>(local) * 8), docs(static_cast<std::size_t>(local) * 4),
        real(static_cast<std::size_t>(local));
    partition_thd({.cp = layout.cp,
                   .rank = rank,
                   .cu_padded = device_.cu_padded,
                   .doc_lens = lens.as<std::int64_t>(),
                   .n_docs = host_.n_docs,
                   .padded_len = layout.padded_len},
                  {.index = slots.as<std::int64_t>(),
                   .positions = positions.as<std::int64_t>(),
                   .doc_ids = docs.as<std::int32_t>(),
                   .real = real.as<std::uint8_t>()},
                  stream);
    const auto n = static_cast<std::size_t>(local);
    expect_equal(download_vector<std::int64_t>(slots, n, stream), layout.index[0], layout, rank,
                 "thd partition slots");
    expect_equal(download_vector<std::int64_t>(positions, n, stream), layout.positions[0], layout,
                 rank, "thd partition positions");
    expect_equal(download_vector<std::int32_t>(docs, n, stream), layout.doc_ids[0], layout, rank,
                 "thd document ids");
    expect_equal(download_vector<std::uint8_t>(real, n, stream), layout.real[0], layout, rank,
                 "thd real flags");
  }
}

}  // namespace cplab::gpu
