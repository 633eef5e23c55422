// "X-mpi": an implementation whose C ranks are the processes of an MPI job. The same rank-local
// code as X; only where its ranks run differs.
#include <deque>
#include <mutex>

#include "properties/harness.hpp"
#include "properties/implementation_registry.hpp"
#include "properties/rank_processes.hpp"
#include "sim/sim_implementation.hpp"

namespace cplab::properties {
namespace {

// X's implementation under its variant's name, unavailable where the build has no MPI.
class ProcessVariant final : public Implementation {
 public:
  ProcessVariant(std::unique_ptr<Implementation> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  bool available() const override { return mpi_rank_processes() != nullptr && inner_->available(); }
  std::string why_unavailable() const override {
    return mpi_rank_processes() == nullptr ? "built without MPI (CPLAB_MPI)"
                                           : inner_->why_unavailable();
  }
  std::string cp_attention_unsupported(sim::AttentionAlgo algo) const override {
    return inner_->cp_attention_unsupported(algo);
  }
  std::string ulysses_unsupported() const override { return inner_->ulysses_unsupported(); }
  std::string shift_unsupported() const override { return inner_->shift_unsupported(); }

 protected:
  // X's verbs, which check the arguments again (the same checks, so never another answer).
  std::vector<RankShard> do_shard(Comm& comm, const LayoutSpec& spec, const Batch& batch) override {
    return inner_->shard(comm, spec, batch);
  }
  Tensor do_shard_primary_later(Comm& comm, const ShardLayout& layout,
                                const Batch& micro_batch) override {
    return inner_->shard_primary_later(comm, layout, micro_batch);
  }
  Tensor do_shard_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& value,
                               std::int64_t seq_dim, std::optional<double> fill) override {
    return inner_->shard_token_tensor(comm, layout, value, seq_dim, fill);
  }
  Tensor do_gather_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                                std::int64_t seq_dim, bool trim) override {
    return inner_->gather_token_tensor(comm, layout, local, seq_dim, trim);
  }
  Tensor do_gather_token_tensor_backward(Comm& comm, const ShardLayout& layout,
                                         const Tensor& grad_gathered, std::int64_t seq_dim,
                                         bool trim) override {
    return inner_->gather_token_tensor_backward(comm, layout, grad_gathered, seq_dim, trim);
  }
  Tensor do_gather_tokens(Comm& comm, const Tensor& local) override {
    return inner_->gather_tokens(comm, local);
  }
  Tensor do_gather_tokens_backward(Comm& comm, const Tensor& grad_gathered) override {
    return inner_->gather_tokens_backward(comm, grad_gathered);
  }
  LossOutput do_shifted_cp_loss(Comm& comm, const ShardLayout& layout, const Tensor& logits,
                                const Tensor& labels, const Tensor& valid,
                                std::int64_t depth) override {
    return inner_->shifted_cp_loss(comm, layout, logits, labels, valid, depth);
  }
  AttentionOutput do_attention(Comm& comm, const ShardLayout& layout, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& grad_out) override {
    return inner_->attention(comm, layout, q, k, v, grad_out);
  }
  CpAttentionOutput do_cp_attention(Comm& comm, const ShardLayout& layout,
                                    const std::vector<sim::AttentionSchedule>& rows,
                                    const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& grad_out) override {
    return inner_->cp_attention(comm, layout, rows, q, k, v, grad_out);
  }
  Tensor do_shift_token_tensor(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               std::int64_t seq_dim, std::int64_t depth, double fill) override {
    return inner_->shift_token_tensor(comm, layout, local, seq_dim, depth, fill);
  }
  Tensor do_ulysses_all_to_all(Comm& comm, const ShardLayout& layout, const Tensor& local,
                               const UlyssesHeads& heads, HeadKind kind) override {
    return inner_->ulysses_all_to_all(comm, layout, local, heads, kind);
  }
  Tensor do_ulysses_all_to_all_inverse(Comm& comm, const ShardLayout& layout,
                                       const Tensor& gathered, const UlyssesHeads& heads,
                                       HeadKind kind) override {
    return inner_->ulysses_all_to_all_inverse(comm, layout, gathered, heads, kind);
  }

 private:
  std::unique_ptr<Implementation> inner_;
  std::string name_;
};

// The mutants, and the GPU paths whose collectives cross processes: NCCL (rank r on device r,
// the unique id over the host comm) and the host-staged one. `gpu` is not among them: its
// device-sim group lives in one process.
bool has_process_variant(const ImplementationInfo& info) {
  if (info.ranks_as_processes) return false;
  return info.mutant || info.name == "gpu-nccl" || info.name == "gpu-host";
}

thread_local RankProcesses* g_active = nullptr;
std::int64_t g_timeout_ms = kCollectiveTimeoutMs;

}  // namespace

ImplementationInfo process_variant_of(const ImplementationInfo& base) {
  ImplementationInfo v = base;
  v.name = base.name + kProcessSuffix;
  v.summary = base.summary + "; one MPI process per rank (mpirun -np C cplab ...)";
  v.in_default_sweep = false;
  v.ranks_as_processes = true;
  const auto make = base.make;
  const std::string name = v.name;
  v.make = [make, name] { return std::make_unique<ProcessVariant>(make(), name); };
  return v;
}

const ImplementationInfo* find_process_variant(const std::string& name) {
  const std::string suffix = kProcessSuffix;
  if (name.size() <= suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return nullptr;
  const std::string base = name.substr(0, name.size() - suffix.size());
  static std::mutex mu;
  static std::deque<ImplementationInfo> made;  // stable addresses
  std::lock_guard lock(mu);
  for (const ImplementationInfo& info : made) {
    if (info.name == name) return &info;
  }
  for (const ImplementationInfo& info : implementation_registry()) {
    if (info.name == base && has_process_variant(info))
      return &made.emplace_back(process_variant_of(info));
  }
  return nullptr;
}

RankProcesses* active_rank_processes() { return g_active; }

std::int64_t rank_process_timeout_ms() { return g_timeout_ms; }
void set_rank_process_timeout_ms(std::int64_t ms) {
  CPLAB_CHECK(ms >= 1, "a rank timeout of {} ms", ms);
  g_timeout_ms = ms;
}

ScopedRankProcesses::ScopedRankProcesses(RankProcesses* processes) : saved_(g_active) {
  g_active = processes;
}
ScopedRankProcesses::~ScopedRankProcesses() { g_active = saved_; }

}  // namespace cplab::properties
