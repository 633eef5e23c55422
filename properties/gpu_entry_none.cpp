// The GPU entries of a build without CUDA: registered so that a sweep asked for `--impl gpu`
// reports them skipped with the reason, never passed and never an unknown name.
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "properties/implementation_registry.hpp"

namespace cplab::properties {

namespace {

constexpr const char* kWhy =
    "built without CUDA (CPLAB_HAVE_CUDA is off): the gpu implementation was not compiled";

class NotBuilt final : public Implementation {
 public:
  explicit NotBuilt(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  bool available() const override { return false; }
  std::string why_unavailable() const override { return kWhy; }

 protected:
  std::vector<RankShard> do_shard(Comm&, const LayoutSpec&, const Batch&) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }
  Tensor do_shard_primary_later(Comm&, const ShardLayout&, const Batch&) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }
  Tensor do_shard_token_tensor(Comm&, const ShardLayout&, const Tensor&, std::int64_t,
                               std::optional<double>) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }
  Tensor do_gather_token_tensor(Comm&, const ShardLayout&, const Tensor&, std::int64_t,
                                bool) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }
  Tensor do_gather_token_tensor_backward(Comm&, const ShardLayout&, const Tensor&, std::int64_t,
                                         bool) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }
  Tensor do_gather_tokens(Comm&, const Tensor&) override { CPLAB_FAIL("gpu: {}", kWhy); }
  Tensor do_gather_tokens_backward(Comm&, const Tensor&) override { CPLAB_FAIL("gpu: {}", kWhy); }
  LossOutput do_shifted_cp_loss(Comm&, const ShardLayout&, const Tensor&, const Tensor&,
                                const Tensor&, std::int64_t) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }
  AttentionOutput do_attention(Comm&, const ShardLayout&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&) override {
    CPLAB_FAIL("gpu: {}", kWhy);
  }

 private:
  std::string name_;
};

}  // namespace

std::vector<ImplementationInfo> gpu_entries() {
  std::vector<ImplementationInfo> entries;
  for (const char* name : {"gpu", "gpu-nccl", "gpu-host"}) {
    entries.push_back({.name = name,
                       .summary = "the production CUDA path (not in this build)",
                       .in_default_sweep = std::string_view(name) == "gpu",
                       .make = [name] { return std::make_unique<NotBuilt>(name); }});
  }
  return entries;
}

}  // namespace cplab::properties
