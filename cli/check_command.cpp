// `cplab check`: the shards a production sharder wrote for each rank (and optionally a gather's
// output) against the reference plan of one layout, or of whichever registered layout explains
// them (--layout auto). Exit 0 when everything matches, 1 on a difference, 2 on unreadable input.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "check/layout_search.hpp"
#include "cli/arguments.hpp"
#include "cli/command.hpp"
#include "cli/option_flags.hpp"
#include "core/error.hpp"
#include "io/torch_batch.hpp"
#include "reference/plan.hpp"

namespace cplab::cli {
namespace {

using check::layout_brief;
using check::Outcome;
using check::Verdict;

constexpr const char* kAuto = "auto";
constexpr std::size_t kShownDifferences = 200;
constexpr const char* kMaxSeqlenRule =
    "at least the largest segment of the rank's cu_seqlens (TransformerEngine's contract)";

struct CheckArgs {
  std::string batch_path, gathered_path, pad_policy, layout_arg;
  std::vector<std::string> shard_paths;
  LayoutSpec spec;
  std::string pad_id;  // parsed strictly: CLI11 saturates 2^63 to 2^63-1
  bool json = false;
  CLI::Option* pad_id_option = nullptr;
  OptionFlags options;
};

std::string policy_name(PadPolicy policy) {
  for (const auto& p : check::pad_policies()) {
    if (p.policy == policy) return p.name;
  }
  return "?";
}

std::string policy_meaning(PadPolicy policy) {
  for (const auto& p : check::pad_policies()) {
    if (p.policy == policy) return p.meaning;
  }
  return "?";
}

std::string cu_meaning(const std::string& convention) {
  if (convention == "local") return "local (cu_seqlens_padded / C on every rank)";
  if (convention == "global") return "global (every rank holds the whole cu_seqlens_padded)";
  return convention;
}

void print_json(const CheckArgs& args, const Batch& batch, const Verdict& v) {
  const Outcome& o = v.outcome;
  nlohmann::ordered_json out;
  out["match"] = o.diffs.empty();
  out["layout"] = o.spec.layout;
  out["cp"] = o.spec.cp;
  out["spec"] = layout_brief(o.spec);
  out["auto"] = v.automatic;
  out["candidates"] = v.candidates;
  out["planned"] = v.planned;
  out["also_explained_by"] = v.also;
  out["batch"] = {{"path", args.batch_path},
                  {"rows", batch.rows()},
                  {"seq_len", batch.seq_len()},
                  {"packed", batch.packed()}};
  out["conventions"] = {{"pad_policy", policy_name(o.spec.pad_policy)},
                        {"pad_policy_meaning", policy_meaning(o.spec.pad_policy)},
                        {"pad_policy_from", o.policy_given ? "--pad-policy" : "best fit"},
                        {"pad_id", o.spec.pad_token_id},
                        {"pad_id_from", o.pad_id_from},
                        {"cu_seqlens", o.cu_seqlens},
                        {"cu_seqlens_filler", o.cu_fillers},
                        {"max_seqlen", o.max_seqlen_checked ? nlohmann::ordered_json(kMaxSeqlenRule)
                                                            : nlohmann::ordered_json(nullptr)},
                        {"padding_mask_for_attention_mask", o.padding_mask_for_attention_mask}};
  out["notes"] = o.notes;
  out["score"] = o.score;
  out["differences"] = nlohmann::ordered_json::array();
  for (const auto& d : o.diffs) {
    nlohmann::ordered_json j;
    j["source"] = d.rank >= 0 ? "shard" : "gathered";
    j["rank"] = d.rank >= 0 ? nlohmann::ordered_json(d.rank) : nlohmann::ordered_json(nullptr);
    j["key"] = d.key;
    j["kind"] = check::diff_kind_name(d.kind);
    j["row"] = d.row;
    j["begin"] = d.begin;
    j["end"] = d.end;
    j["should_hold"] = d.should;
    j["holds"] = d.holds;
    j["message"] = d.text;
    out["differences"].push_back(std::move(j));
  }
  fmt::print("{}\n", out.dump());
}

void print_text(const CheckArgs& args, const Batch& batch, const Verdict& v) {
  const Outcome& o = v.outcome;
  fmt::print("cplab check: {} ({} rows, S={}, {}) · {} shard files{}\n", args.batch_path,
             batch.rows(), batch.seq_len(), batch.packed() ? "packed" : "BSHD",
             args.shard_paths.size(),
             args.gathered_path.empty() ? "" : " · gathered " + args.gathered_path);
  const std::string brief = layout_brief(o.spec);
  if (!v.automatic) {
    fmt::print("layout: {}\n", brief);
  } else if (o.diffs.empty()) {
    fmt::print(
        "layout: {} (auto: explains the shards; {} candidates, {} planned in full){}\n", brief,
        v.candidates, v.planned,
        v.also.empty() ? "" : fmt::format("; also explained by {}", fmt::join(v.also, ", ")));
  } else {
    fmt::print(
        "layout: no registered layout explains the shards; closest of {} candidates ({} planned "
        "in full): {}, except:\n",
        v.candidates, v.planned, brief);
  }
  std::string more;
  if (!o.cu_seqlens.empty()) more += " · cu_seqlens " + cu_meaning(o.cu_seqlens);
  if (!o.cu_fillers.empty()) {
    more +=
        fmt::format(" · stacked cu_seqlens rows end in filler {}", fmt::join(o.cu_fillers, ", "));
  }
  if (o.max_seqlen_checked) more += std::string(" · max_seqlen ") + kMaxSeqlenRule;
  if (o.padding_mask_for_attention_mask) {
    more += " · padding_mask stands for the batch's attention_mask (True exactly on pad slots)";
  }
  fmt::print("conventions: pad policy {} ({}; {}) · pad id {} ({}){}\n",
             policy_name(o.spec.pad_policy), policy_meaning(o.spec.pad_policy),
             o.policy_given ? "given" : "fits the shards best", o.spec.pad_token_id, o.pad_id_from,
             more);
  for (const auto& note : o.notes) fmt::print("note: {}\n", note);
  for (std::size_t i = 0; i < o.diffs.size() && i < kShownDifferences; ++i)
    fmt::print("  {}\n", o.diffs[i].text);
  if (o.diffs.size() > kShownDifferences)
    fmt::print("  … and {} more (--json lists all)\n", o.diffs.size() - kShownDifferences);
  if (o.diffs.empty()) {
    fmt::print("MATCH: every key of every rank is what {} gives\n", brief);
  } else {
    fmt::print("MISMATCH: {} differences ({} wrong slots, keys or entries)\n", o.diffs.size(),
               o.score);
  }
}

int run_check(const CheckArgs& args) {
  // Before any file is read: a value out of range is refused, not taken as the nearest bound.
  const std::int64_t pad_id =
      args.pad_id_option->count() > 0 ? parse_int64("--pad-id", args.pad_id) : 0;
  CPLAB_CHECK(!args.shard_paths.empty() || !args.gathered_path.empty(),
              "nothing to check: give --shards rank0.pt rank1.pt ... and/or --gathered FILE.pt");
  const bool automatic = args.layout_arg == kAuto;
  CPLAB_CHECK(!automatic || !args.shard_paths.empty(),
              "--layout auto reads the layout off the shards: give --shards");
  CPLAB_CHECK(args.shard_paths.empty() ||
                  static_cast<std::int64_t>(args.shard_paths.size()) == args.spec.cp,
              "--shards: {} files for --cp {}; give one per rank, in rank order",
              args.shard_paths.size(), args.spec.cp);
  LayoutSpec probe = args.spec;
  probe.layout = automatic ? reference::layout_names().front() : args.layout_arg;
  // The options' own ranges now (an auto value is only known with the batch's S).
  validate_spec(apply_option_flags(probe, args.options, 0));
  // After the arguments: a usage error is named as such on every build.
  CPLAB_CHECK(io::torch_available(),
              "this cplab cannot read torch.save files (it has no libtorch; configure with "
              "-DCPLAB_TORCH=ON)");
  io::SkippedEntries skipped;
  const Batch batch = io::load_torch_batch(args.batch_path, &skipped);
  note_skipped_entries(args.batch_path, skipped);
  probe = apply_option_flags(probe, args.options, batch.seq_len());
  std::vector<io::TensorFile> shards;
  for (const std::string& path : args.shard_paths) {
    shards.push_back(io::load_torch_tensors(path));
    note_skipped_entries(path, shards.back().skipped);
  }
  check::Conventions conventions;
  if (args.pad_id_option->count() > 0) conventions.pad_id = pad_id;
  if (!args.pad_policy.empty()) conventions.policy = check::parse_pad_policy(args.pad_policy);

  Verdict verdict;
  if (automatic) {
    check::FixedOptions fixed;
    for (const layouts::LayoutOption* o : layouts::all_options()) {
      if (args.options.given(*o)) fixed.push_back(o);
    }
    verdict = check::find_layout(probe, fixed, batch, shards, conventions);
  } else if (!shards.empty()) {
    verdict.outcome = check::check_shards(probe, batch, shards, conventions);
  } else {
    verdict.outcome.spec = probe;
    verdict.outcome.spec.pad_token_id = conventions.pad_id.value_or(args.spec.pad_token_id);
    verdict.outcome.spec.pad_policy = conventions.policy.value_or(args.spec.pad_policy);
    verdict.outcome.policy_given = conventions.policy.has_value();
    verdict.outcome.pad_id_from = conventions.pad_id ? "--pad-id" : "default";
  }
  if (!args.gathered_path.empty()) {
    check::check_gathered(batch, io::load_torch_tensors(args.gathered_path), verdict.outcome);
  }
  if (args.json) {
    print_json(args, batch, verdict);
  } else {
    print_text(args, batch, verdict);
  }
  return verdict.outcome.diffs.empty() ? 0 : 1;
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* sub = app.add_subcommand(
      "check", "Check the shards a production sharder wrote against a layout's reference plan");
  sub->add_option("--batch", args->batch_path, "The unsharded batch, saved with torch.save")
      ->required();
  sub->add_option("--shards", args->shard_paths,
                  "One torch.save file per rank, in rank order: the sharded batch dict");
  sub->add_option("--layout", args->layout_arg,
                  fmt::format("Layout: {}, or auto (the registered layout that explains the "
                              "shards, or the closest)",
                              fmt::join(reference::layout_names(), ", ")))
      ->required();
  sub->add_option("--cp", args->spec.cp, "CP size C (ranks in the group)")->required();
  // With --layout auto, an option left out is searched over the values its layout declares.
  add_option_flags(sub, args->options);
  args->pad_id_option = sub->add_option(
      "--pad-id", args->pad_id, "Pad token id of added slots (default: read off the shards)");
  sub->add_option("--pad-policy", args->pad_policy,
                  "Pad convention of added slots: spec or zero (default: the one that fits)");
  sub->add_option("--gathered", args->gathered_path,
                  "A gather_token_tensor output (trimmed or not) to check against the batch");
  sub->add_flag("--json", args->json, "Print one JSON object instead of the report");
  return {sub, [args] { return run_check(*args); }};
}

}  // namespace cplab::cli
