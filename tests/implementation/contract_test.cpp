// The contract's argument checks (implementation/implementation.cpp), registry style: each verb's
// entry owns a call that fits and the error inputs the contract refuses, each with the words it is
// refused in. The implementation under these calls only records which hook a call reached, so
// every error input must be refused before any hook runs, whatever the implementation is, and the
// call that fits must reach its verb's hook: each check is shown to be the one that refuses its
// input (take one out and its row reaches the hook).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "comm/thread_comm.hpp"
#include "core/source_dir.hpp"
#include "implementation/implementation.hpp"
#include "sim/sim_implementation.hpp"
#include "tests/support/fixtures.hpp"
#include "tests/support/layouts.hpp"

namespace cplab {
namespace {

// A rank of a group that is never talked to: the contract reads the comm's rank and size only.
class SilentComm final : public Comm {
 public:
  SilentComm(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "silent"; }
  std::uint64_t bytes_sent() const override { return 0; }

 private:
  [[noreturn]] static void talked() { CPLAB_FAIL("the contract's checks talked to the comm"); }
  void do_all_gather(const void*, void*, std::size_t, DType) override { talked(); }
  std::vector<std::size_t> do_all_gather_v(const void*, std::size_t, void*, std::size_t,
                                           DType) override {
    talked();
  }
  void do_all_reduce(void*, std::size_t, DType, ReduceOp) override { talked(); }
  void do_reduce_scatter(const void*, void*, std::size_t, DType, ReduceOp) override { talked(); }
  void do_all_to_all(const void*, void*, std::size_t, DType) override { talked(); }
  void do_send(const void*, std::size_t, DType, int, int) override { talked(); }
  void do_recv(void*, std::size_t, DType, int, int) override { talked(); }
  void do_send_recv(const void*, std::size_t, int, void*, std::size_t, int, DType, int) override {
    talked();
  }
  void do_barrier() override { talked(); }

  int rank_, size_;
};

// Thrown by a hook: the call got past the contract's checks.
struct HookReached {
  std::string hook;
};

// An implementation that has every verb (or, with `lacks`, none of the optional ones) and whose
// hooks only say they were reached.
class HookRecorder final : public Implementation {
 public:
  explicit HookRecorder(bool lacks) : lacks_(lacks) {}
  std::string name() const override { return "recorder"; }
  std::string shift_unsupported() const override { return lacks_ ? "recorder lacks shift" : ""; }
  std::string cp_attention_unsupported(sim::AttentionAlgo) const override {
    return lacks_ ? "recorder lacks cp_attention" : "";
  }
  std::string ulysses_unsupported() const override {
    return lacks_ ? "recorder lacks the Ulysses all-to-all" : "";
  }

 protected:
  std::vector<RankShard> do_shard(Comm&, const LayoutSpec&, const Batch&) override {
    throw HookReached{"do_shard"};
  }
  Tensor do_shard_primary_later(Comm&, const ShardLayout&, const Batch&) override {
    throw HookReached{"do_shard_primary_later"};
  }
  Tensor do_shard_token_tensor(Comm&, const ShardLayout&, const Tensor&, std::int64_t,
                               std::optional<double>) override {
    throw HookReached{"do_shard_token_tensor"};
  }
  Tensor do_gather_token_tensor(Comm&, const ShardLayout&, const Tensor&, std::int64_t,
                                bool) override {
    throw HookReached{"do_gather_token_tensor"};
  }
  Tensor do_gather_token_tensor_backward(Comm&, const ShardLayout&, const Tensor&, std::int64_t,
                                         bool) override {
    throw HookReached{"do_gather_token_tensor_backward"};
  }
  Tensor do_shift_token_tensor(Comm&, const ShardLayout&, const Tensor&, std::int64_t, std::int64_t,
                               double) override {
    throw HookReached{"do_shift_token_tensor"};
  }
  Tensor do_gather_tokens(Comm&, const Tensor&) override { throw HookReached{"do_gather_tokens"}; }
  Tensor do_gather_tokens_backward(Comm&, const Tensor&) override {
    throw HookReached{"do_gather_tokens_backward"};
  }
  LossOutput do_shifted_cp_loss(Comm&, const ShardLayout&, const Tensor&, const Tensor&,
                                const Tensor&, std::int64_t) override {
    throw HookReached{"do_shifted_cp_loss"};
  }
  AttentionOutput do_attention(Comm&, const ShardLayout&, const Tensor&, const Tensor&,
                               const Tensor&, const Tensor&) override {
    throw HookReached{"do_attention"};
  }
  CpAttentionOutput do_cp_attention(Comm&, const ShardLayout&,
                                    const std::vector<sim::AttentionSchedule>&, const Tensor&,
                                    const Tensor&, const Tensor&, const Tensor&) override {
    throw HookReached{"do_cp_attention"};
  }
  Tensor do_ulysses_all_to_all(Comm&, const ShardLayout&, const Tensor&, const UlyssesHeads&,
                               HeadKind) override {
    throw HookReached{"do_ulysses_all_to_all"};
  }
  Tensor do_ulysses_all_to_all_inverse(Comm&, const ShardLayout&, const Tensor&,
                                       const UlyssesHeads&, HeadKind) override {
    throw HookReached{"do_ulysses_all_to_all_inverse"};
  }

 private:
  bool lacks_;
};

constexpr std::int64_t kCp = 2, kRank = 1, kRows = 2, kHeads = 4, kKvHeads = 2, kDim = 3;

// Rank 1's recorded layout of a BSHD batch [B=2, S] under a plain layout at C = 2, S chosen so that
// the layout pads it (L > S): every verb's arguments are sized from it.
struct Recorded {
  LayoutSpec spec;
  Batch batch;
  ShardLayout layout;
};

const Recorded& recorded() {
  static const Recorded r = [] {
    Recorded out;
    out.spec.layout = testsupport::a_plain_layout();
    out.spec.cp = kCp;
    const std::int64_t unit = sim::layout_descriptor(out.spec.layout).padding.unit(out.spec);
    out.batch.add(keys::input_ids, testsupport::located(DType::i64, {kRows, 4 * unit - 1}));
    sim::SimImplementation twin;
    sim::World world(static_cast<int>(kCp));
    world.run([&](sim::RankContext& ctx) {
      std::vector<RankShard> shards = twin.shard(ctx.comm, out.spec, out.batch);
      if (ctx.rank == kRank) out.layout = shards.front().layout;
    });
    return out;
  }();
  return r;
}

// Every argument any verb takes, set to fit by the verb's sample; an error input spoils one.
struct Call {
  int comm_rank = static_cast<int>(kRank), comm_size = static_cast<int>(kCp);
  bool lacks = false;  // the implementation lacks the optional verbs
  LayoutSpec spec;
  Batch batch;
  ShardLayout layout;
  Tensor a, b, c, d;  // the verb's tensors in its order
  std::int64_t seq_dim = 1, depth = 1;
  std::optional<double> fill;
  bool trim = false;
  std::vector<sim::AttentionSchedule> schedules;
  UlyssesHeads heads{.query = kHeads, .kv = kKvHeads};
  HeadKind kind = HeadKind::query;
};

struct ErrorInput {
  const char* what;
  std::function<void(Call&)> spoil;
  std::string words;  // in the one-line error
};

struct VerbEntry {
  const char* verb;
  const char* hook;
  std::function<void(Call&)> sample;  // sets what the verb reads to fit
  std::function<void(Implementation&, Comm&, Call&)> run;
  std::vector<ErrorInput> errors;
};

std::int64_t ell() { return recorded().layout.local_len(); }
std::int64_t padded() { return recorded().layout.padded_len; }
std::int64_t caller() { return recorded().layout.caller_len; }

Tensor f32(Shape shape) { return Tensor(DType::f32, std::move(shape)); }
Tensor i64(Shape shape) { return Tensor(DType::i64, std::move(shape)); }

void unrecorded(Call& c) { c.layout = ShardLayout{}; }
void other_rank(Call& c) { c.comm_rank = 0; }

sim::AttentionSchedule schedule_for(const Call& c) {
  sim::AttentionSchedule s;
  s.layout = c.layout.layout;
  s.algo = sim::AttentionAlgo::all_gather;
  s.cp = kCp;
  s.padded_len = padded();
  s.shape = {.heads = kHeads, .kv_heads = kKvHeads, .head_dim = kDim, .dtype = DType::f32};
  return s;
}

const ErrorInput kUnrecorded{"a layout never recorded", unrecorded, "shard a batch first"};

std::vector<VerbEntry> verb_entries() {
  std::vector<VerbEntry> v;
  v.push_back({"shard",
               "do_shard",
               [](Call& c) {
                 c.spec = recorded().spec;
                 c.batch = recorded().batch;
               },
               [](Implementation& impl, Comm& comm, Call& c) { impl.shard(comm, c.spec, c.batch); },
               {{"a comm of another size than C", [](Call& c) { c.comm_size = 3; },
                 "shard: the comm has 3 ranks"}}});
  v.push_back({"shard_primary_later",
               "do_shard_primary_later",
               [](Call& c) { c.batch = recorded().batch; },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.shard_primary_later(comm, c.layout, c.batch);
               },
               {kUnrecorded,
                {"a primary of other rows",
                 [](Call& c) {
                   c.batch = Batch{};
                   c.batch.add(keys::input_ids, i64({kRows + 1, caller()}));
                 },
                 "the microbatch was B=2 rows"}}});
  v.push_back({"shard_token_tensor",
               "do_shard_token_tensor",
               [](Call& c) {
                 c.a = f32({kRows, padded(), kDim});
                 c.fill = std::nullopt;
               },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.shard_token_tensor(comm, c.layout, c.a, c.seq_dim, c.fill);
               },
               {kUnrecorded,
                {"other rows",
                 [](Call& c) {
                   c.a = f32({kRows + 1, padded(), kDim});
                 },
                 "rows on dim 0; the layout has B=2"},
                {"neither L nor S tokens",
                 [](Call& c) {
                   c.a = f32({kRows, padded() + 1, kDim});
                 },
                 "neither the padded length"},
                {"the caller's S without a fill",
                 [](Call& c) {
                   c.a = f32({kRows, caller(), kDim});
                 },
                 "needs an explicit fill"}}});
  v.push_back({"gather_token_tensor",
               "do_gather_token_tensor",
               [](Call& c) {
                 c.a = f32({kRows, ell(), kDim});
               },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.gather_token_tensor(comm, c.layout, c.a, c.seq_dim, c.trim);
               },
               {kUnrecorded,
                {"not this rank's shard",
                 [](Call& c) {
                   c.a = f32({kRows, ell() + 1, kDim});
                 },
                 "this rank holds B=2 rows"}}});
  v.push_back({"gather_token_tensor_backward",
               "do_gather_token_tensor_backward",
               [](Call& c) {
                 c.trim = true;
                 c.a = f32({kRows, caller(), kDim});
               },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.gather_token_tensor_backward(comm, c.layout, c.a, c.seq_dim, c.trim);
               },
               {kUnrecorded,
                {"L tokens where the gather trimmed to S",
                 [](Call& c) {
                   c.a = f32({kRows, padded(), kDim});
                 },
                 "the gathered tensor had"}}});
  v.push_back(
      {"shift_token_tensor",
       "do_shift_token_tensor",
       [](Call& c) {
         c.a = i64({kRows, ell()});
         c.fill = -100.0;
       },
       [](Implementation& impl, Comm& comm, Call& c) {
         impl.shift_token_tensor(comm, c.layout, c.a, c.seq_dim, c.depth, *c.fill);
       },
       {{"an implementation without it", [](Call& c) { c.lacks = true; }, "recorder lacks shift"},
        kUnrecorded,
        {"depth 0", [](Call& c) { c.depth = 0; }, "the depth must be at least 1, not 0"},
        {"a fill the dtype does not hold", [](Call& c) { c.fill = 0.5; },
         "the fill 0.5 is not a i64 value"},
        {"a comm of another rank", other_rank, "shift_token_tensor: the comm is rank 0 of 2"},
        {"not this rank's shard",
         [](Call& c) {
           c.a = i64({kRows, padded()});
         },
         "is not a shard [B=2"}}});
  v.push_back({"gather_tokens",
               "do_gather_tokens",
               [](Call& c) {
                 c.a = f32({ell(), kDim});
               },
               [](Implementation& impl, Comm& comm, Call& c) { impl.gather_tokens(comm, c.a); },
               {{"no token dim", [](Call& c) { c.a = f32({}); }, "has no token dim"}}});
  v.push_back(
      {"gather_tokens_backward",
       "do_gather_tokens_backward",
       [](Call& c) {
         c.a = f32({kCp * ell(), kDim});
       },
       [](Implementation& impl, Comm& comm, Call& c) { impl.gather_tokens_backward(comm, c.a); },
       {{"no equal rank slices",
         [](Call& c) {
           c.a = f32({kCp * ell() + 1, kDim});
         },
         "does not split into 2 equal rank slices"}}});
  v.push_back({"shifted_cp_loss",
               "do_shifted_cp_loss",
               [](Call& c) {
                 c.a = f32({kRows, ell(), 5});
                 c.b = i64({kRows, ell()});
                 c.c = Tensor(DType::b8, {kRows, ell()});
               },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.shifted_cp_loss(comm, c.layout, c.a, c.b, c.c, c.depth);
               },
               {kUnrecorded,
                {"depth 0", [](Call& c) { c.depth = 0; }, "the depth must be at least 1, not 0"},
                {"a comm of another rank", other_rank, "shifted_cp_loss: the comm is rank 0 of 2"},
                {"logits of the padded length",
                 [](Call& c) {
                   c.a = f32({kRows, padded(), 5});
                 },
                 "shifted_cp_loss: logits"},
                {"f32 labels",
                 [](Call& c) {
                   c.b = f32({kRows, ell()});
                 },
                 "must be i64 or i32"},
                {"a flag short",
                 [](Call& c) {
                   c.c = Tensor(DType::b8, {kRows, ell() - 1});
                 },
                 "must hold B·ℓ"}}});
  VerbEntry attention{"attention",
                      "do_attention",
                      [](Call& c) {
                        c.a = c.b = c.c = c.d = f32({kRows, ell(), kDim});
                      },
                      [](Implementation& impl, Comm& comm, Call& c) {
                        impl.attention(comm, c.layout, c.a, c.b, c.c, c.d);
                      },
                      {kUnrecorded}};
  const std::vector<std::pair<const char*, Tensor Call::*>> inputs = {
      {"q", &Call::a}, {"k", &Call::b}, {"v", &Call::c}, {"grad_out", &Call::d}};
  for (const auto& [name, member] : inputs) {
    attention.errors.push_back({name,
                                [member](Call& c) {
                                  c.*member = f32({kRows, ell() + 1, kDim});
                                },
                                fmt::format("attention: {} is", name)});
  }
  v.push_back(std::move(attention));
  v.push_back(
      {"cp_attention",
       "do_cp_attention",
       [](Call& c) {
         c.a = c.d = f32({kRows, ell(), kHeads, kDim});
         c.b = c.c = f32({kRows, ell(), kKvHeads, kDim});
         c.schedules.assign(kRows, schedule_for(c));
       },
       [](Implementation& impl, Comm& comm, Call& c) {
         impl.cp_attention(comm, c.layout, c.schedules, c.a, c.b, c.c, c.d);
       },
       {kUnrecorded,
        {"a schedule short", [](Call& c) { c.schedules.pop_back(); }, "1 schedules for 2 rows"},
        {"an implementation without it", [](Call& c) { c.lacks = true; },
         "recorder lacks cp_attention"},
        {"a comm of another rank", other_rank, "cp_attention: the comm is rank 0 of 2"},
        {"q not [B, ℓ, H, d]",
         [](Call& c) {
           c.a = f32({kRows, ell(), kHeads});
         },
         "cp_attention: q is"},
        {"v of another shape than k",
         [](Call& c) {
           c.c = f32({kRows, ell(), kHeads, kDim});
         },
         "cp_attention: k is"},
        {"grad_out of another dtype",
         [](Call& c) {
           c.d = Tensor(DType::bf16, {kRows, ell(), kHeads, kDim});
         },
         "cp_attention: grad_out is"},
        {"query heads that are no multiple of the KV heads",
         [](Call& c) {
           c.b = c.c = f32({kRows, ell(), 3, kDim});
         },
         "GQA needs H % H_kv = 0"},
        {"a schedule of another L", [](Call& c) { c.schedules.back().padded_len += kCp; },
         "row 1's schedule"},
        {"a schedule of other heads", [](Call& c) { c.schedules.back().shape.kv_heads = kHeads; },
         "schedule is for 4 / 4 heads"}}});
  const auto ulysses_errors = [](const char* verb, Tensor Call::*member, Shape wrong,
                                 const char* shape_words) {
    return std::vector<ErrorInput>{
        {"an implementation without it", [](Call& c) { c.lacks = true; },
         "recorder lacks the Ulysses all-to-all"},
        kUnrecorded,
        {"a group other than the CP group", [](Call& c) { c.comm_size = 4; },
         "the Ulysses group must be the CP group"},
        {"query heads that do not split over U", [](Call& c) { c.heads.query = 3; },
         "H = 3 query heads do not split over U = 2"},
        {verb, [member, wrong](Call& c) { c.*member = f32(wrong); }, shape_words}};
  };
  v.push_back({"ulysses_all_to_all", "do_ulysses_all_to_all",
               [](Call& c) {
                 c.a = f32({kRows, ell(), kHeads, kDim});
               },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.ulysses_all_to_all(comm, c.layout, c.a, c.heads, c.kind);
               },
               ulysses_errors("the local tensor of another head count", &Call::a,
                              {kRows, ell(), kKvHeads, kDim}, "the local tensor is")});
  v.push_back({"ulysses_all_to_all_inverse", "do_ulysses_all_to_all_inverse",
               [](Call& c) {
                 c.a = f32({kRows, padded(), kHeads / kCp, kDim});
               },
               [](Implementation& impl, Comm& comm, Call& c) {
                 impl.ulysses_all_to_all_inverse(comm, c.layout, c.a, c.heads, c.kind);
               },
               ulysses_errors("a rank's share of ℓ tokens, not L", &Call::a,
                              {kRows, ell(), kHeads / kCp, kDim}, "expected [B, L, n, d]")});
  return v;
}

// Runs one call; returns the hook it reached ("" when the contract refused it) and the refusal.
struct Outcome {
  std::string hook, error;
};

Outcome run(const VerbEntry& entry, Call call) {
  HookRecorder impl(call.lacks);
  SilentComm comm(call.comm_rank, call.comm_size);
  Outcome out;
  try {
    entry.run(impl, comm, call);
  } catch (const HookReached& reached) {
    out.hook = reached.hook;
  } catch (const Error& e) {
    out.error = e.what();
  }
  return out;
}

Call sample_of(const VerbEntry& entry) {
  Call call;
  call.layout = recorded().layout;
  entry.sample(call);
  return call;
}

TEST(ImplementationContract, EachVerbsFittingCallReachesItsHook) {
  for (const VerbEntry& entry : verb_entries()) {
    const Outcome out = run(entry, sample_of(entry));
    EXPECT_EQ(out.hook, entry.hook) << entry.verb << " was refused: " << out.error;
  }
}

TEST(ImplementationContract, EachErrorInputIsRefusedInItsWordsBeforeAnyHook) {
  std::size_t inputs = 0;
  for (const VerbEntry& entry : verb_entries()) {
    for (const ErrorInput& error : entry.errors) {
      Call call = sample_of(entry);
      error.spoil(call);
      const Outcome out = run(entry, call);
      ++inputs;
      EXPECT_EQ(out.hook, "") << entry.verb << " with " << error.what << " reached its hook";
      EXPECT_NE(out.error.find(error.words), std::string::npos)
          << entry.verb << " with " << error.what << ": \"" << out.error << "\" lacks \""
          << error.words << "\"";
      EXPECT_EQ(out.error.find('\n'), std::string::npos) << out.error;
    }
  }
  EXPECT_GE(inputs, 40u);
}

// Every public verb of implementation.hpp (a public function taking the rank's Comm first) has
// its entry here, in the header's order: a verb added without its error inputs fails.
TEST(ImplementationContract, EveryVerbHasAnEntry) {
  std::ifstream in(std::filesystem::path(source_dir()) / "implementation" / "implementation.hpp");
  ASSERT_TRUE(in) << "implementation/implementation.hpp is not under " << source_dir();
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string::size_type public_at = text.find(" public:"),
                               protected_at = text.find(" protected:", public_at);
  ASSERT_NE(protected_at, std::string::npos);
  const std::string declared = text.substr(public_at, protected_at - public_at);
  const std::regex verb(R"((\w+)\(Comm& comm)");
  std::vector<std::string> header, entries;
  for (auto it = std::sregex_iterator(declared.begin(), declared.end(), verb);
       it != std::sregex_iterator(); ++it)
    header.push_back((*it)[1]);
  for (const VerbEntry& entry : verb_entries()) entries.emplace_back(entry.verb);
  EXPECT_GE(header.size(), 13u);
  EXPECT_EQ(entries, header);
}

}  // namespace
}  // namespace cplab
