// Property 2: shard then gather is the identity, for the batch's keys and for any token-aligned
// tensor, in caller coordinates: the padded length L, the original length S with a fill, THD rows.
#include <fmt/format.h>

#include "properties/checks/checks.hpp"

namespace cplab::properties {

namespace {

// A fill value every dtype holds and content rarely equals, so "padded with 0" shows.
double fill_for(DType t) { return t == DType::b8 || t == DType::u8 ? 1.0 : -3.0; }

// One form of input: the tensor a caller passes, the fill (if any) and whether gather trims.
// `option` names it in the coverage rules; `identity` says whether gather gives the input back
// (a trimmed gather of a padded-length input gives its first S tokens: checked against the
// reference's gather only).
struct Form {
  std::string name;
  Tensor value;
  std::int64_t seq_dim;
  std::optional<double> fill;
  bool trim;
  std::string option;
  bool identity = true;
};

// The same tokens with two planes before the rows ([2,B,len,dim], as mRoPE's [3,B,S]), the second
// plane holding codes of rows past the batch's: the seq dim is then 2, and a plane mix-up shows.
Tensor two_plane_tensor(const Case& c, std::int64_t first_row, std::int64_t rows,
                        std::int64_t len) {
  const Tensor first = token_tensor(c, first_row, rows, len);
  const Tensor second = token_tensor(c, c.rows + first_row, rows, len);
  Shape shape = first.shape();
  shape.insert(shape.begin(), 2);
  Tensor out(c.dtype, shape);
  for (std::int64_t i = 0; i < first.numel(); ++i) {
    out.set(i, first.get(i));
    out.set(first.numel() + i, second.get(i));
  }
  return out;
}

std::vector<Form> forms_of(const Case& c, const ShardPlan& plan, std::int64_t first_row) {
  const RowPlan& row = plan.rows.front();
  const auto rows = static_cast<std::int64_t>(plan.rows.size());
  std::vector<Form> forms;
  // A packed tensor of the caller's length is the caller's THD rows even when L happens to equal S
  // (SPEC §5): the padded-length forms exist only when the lengths differ.
  const bool padded_form = !row.packed || row.padded_len != row.caller_len;
  const std::optional<double> fill = fill_for(c.dtype);
  if (padded_form) {
    const Tensor padded = token_tensor(c, first_row, rows, row.padded_len);
    forms.push_back({"padded length L", padded, 1, std::nullopt, false, "L"});
    // A fill given with a padded-length tensor has nothing to fill: the tensor's own slots stay.
    forms.push_back(
        {"padded length L with a fill, trimmed", padded, 1, fill, true, "L trim", false});
  }
  if (row.packed) {
    const Tensor thd = token_tensor(c, first_row, rows, row.caller_len);
    forms.push_back({"THD rows", thd, 1, std::nullopt, true, "THD"});
    // A fill given for THD rows fills the slots the layout adds (thd's document padding); the
    // untrimmed gather gives the whole stream back, fill and all.
    forms.push_back({"THD rows with fill, untrimmed", thd, 1, fill, false, "THD fill", false});
  } else if (row.caller_len != row.padded_len) {
    forms.push_back({"original length S with fill",
                     token_tensor(c, first_row, rows, row.caller_len), 1, fill, true, "S fill"});
    forms.push_back({"original length S with fill, seq dim 2, untrimmed",
                     two_plane_tensor(c, first_row, rows, row.caller_len), 2, fill, false,
                     "S fill dim2", false});
  }
  // With planes before the rows, the seq dim is 2: THD rows for packed rows, else length L.
  forms.push_back(
      {row.packed ? "THD rows, seq dim 2" : "padded length L, seq dim 2",
       two_plane_tensor(c, first_row, rows, row.packed ? row.caller_len : row.padded_len), 2,
       std::nullopt, row.packed, row.packed ? "THD dim2" : "L dim2"});
  return forms;
}

// Caller slots that hold a real token: where gather(trim) must give back exactly the input (thd
// does not carry the caller's own document padding, which comes back as the reference says).
std::string identity_mismatch(const Case& c, const Form& form, const Tensor& gathered,
                              const ShardPlan& plan, std::int64_t m) {
  if (!form.trim) {
    TokenFrame frame{
        .what = fmt::format("microbatch {}: gather of the {} input is not the input", m, form.name),
        .seq_dim = form.seq_dim,
        .plan = &plan,
        .locate_len = form.value.size(form.seq_dim)};
    return tensor_mismatch(c, frame, form.value, gathered);
  }
  if (gathered.shape() != form.value.shape()) {
    return fmt::format("microbatch {}: gather(trim) of the {} input {} gives {}", m, form.name,
                       tensor_brief(form.value), tensor_brief(gathered));
  }
  Tensor expected = gathered;
  const TokenDims dims = token_dims(form.value.shape(), form.seq_dim);
  for (std::int64_t b = 0; b < dims.rows; ++b) {
    const RowPlan& row = plan.rows[static_cast<std::size_t>(b)];
    for (std::int64_t g = 0; g < row.padded_len; ++g) {
      const std::int64_t t = row.caller_pos[static_cast<std::size_t>(g)];
      if (t < 0 || !row.real[static_cast<std::size_t>(g)]) continue;
      for (std::int64_t o = 0; o < dims.outer; ++o) {
        for (std::int64_t e = 0; e < dims.inner; ++e) {
          const std::int64_t flat = dims.flat(o, b, t, e);
          expected.set(flat, form.value.get(flat));
        }
      }
    }
  }
  TokenFrame frame{.what = fmt::format(
                       "microbatch {}: gather(trim) of the {} input does not give back its tokens",
                       m, form.name),
                   .seq_dim = form.seq_dim,
                   .caller = true,
                   .locate_len = form.value.size(form.seq_dim)};
  return tensor_mismatch(c, frame, expected, gathered);
}

// The batch's row-aligned keys of one microbatch (a shared [1,S] row and a primary kept global
// are not sharded, so they are not gathered back).
std::vector<Form> key_forms(const Case& c, const Batch& caller, std::int64_t rows) {
  std::vector<Form> keys;
  for (const auto& [name, field] : caller.tokens) {
    if (name == caller.primary() && !c.spec.shard_primary) continue;
    if (field.value.size(field.seq_dim - 1) != rows) continue;
    keys.push_back({name, field.value, field.seq_dim, std::nullopt, true, "keys"});
  }
  return keys;
}

// Everything one rank computes, in one run of the world (one set of threads per case): its shard
// of the batch, then per microbatch the gather of each key, and per form its shard_token_tensor
// and the gather of that.
struct RankRun {
  std::vector<std::vector<Tensor>> key_gathers, form_shards, form_gathers;  // [m][i]
};
// When ranks are processes, each rank's run travels to every process (rank_results.hpp).
void encode(wire::Writer& w, const RankRun& run) {
  encode(w, run.key_gathers);
  encode(w, run.form_shards);
  encode(w, run.form_gathers);
}
void decode(wire::Reader& r, RankRun& run) {
  decode(r, run.key_gathers);
  decode(r, run.form_shards);
  decode(r, run.form_gathers);
}

std::string check_shard_gather(const Case& c, Implementation& impl, CheckNotes& notes) {
  const Subject subject(c);
  notes.tags.push_back(
      fmt::format("{} {} {}", c.spec.layout, dtype_name(c.dtype), c.packed() ? "packed" : "bshd"));
  std::vector<std::vector<Form>> keys, forms;
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const ShardPlan& plan = subject.microbatches[static_cast<std::size_t>(m)];
    keys.push_back(
        key_forms(c, subject.microbatch_batch(m), static_cast<std::int64_t>(plan.rows.size())));
    forms.push_back(forms_of(c, plan, m * c.rows_per_microbatch()));
    for (const Form& form : forms.back()) notes.options.push_back(form.option);
  }
  notes.options.push_back(fmt::format("keys kdt={}", key_dtypes_name(c.key_dtypes)));
  const auto runs = on_ranks(c.spec.cp, [&](Comm& comm, std::int64_t) {
    RankRun run;
    const std::vector<RankShard> shards = checked_shard(impl, comm, c.spec, subject.batch);
    CPLAB_CHECK(static_cast<std::int64_t>(shards.size()) == c.spec.microbatches,
                "shard returned {} microbatches, expected {}", shards.size(), c.spec.microbatches);
    for (std::size_t m = 0; m < shards.size(); ++m) {
      const RankShard& mine = shards[m];
      auto& gathers = run.key_gathers.emplace_back();
      for (const Form& key : keys[m]) {
        gathers.push_back(impl.gather_token_tensor(comm, mine.layout, mine.local.at(key.name),
                                                   key.seq_dim, true));
      }
      auto& form_shards = run.form_shards.emplace_back();
      auto& form_gathers = run.form_gathers.emplace_back();
      for (const Form& form : forms[m]) {
        form_shards.push_back(
            impl.shard_token_tensor(comm, mine.layout, form.value, form.seq_dim, form.fill));
        form_gathers.push_back(impl.gather_token_tensor(comm, mine.layout, form_shards.back(),
                                                        form.seq_dim, form.trim));
      }
    }
    return run;
  });
  for (std::int64_t m = 0; m < c.spec.microbatches; ++m) {
    const auto mb = static_cast<std::size_t>(m);
    const ShardPlan& plan = subject.microbatches[mb];
    // The batch's own keys: gather(trim) of each sharded key is the caller's key back.
    for (std::size_t i = 0; i < keys[mb].size(); ++i) {
      for (std::int64_t r = 0; r < c.spec.cp; ++r) {
        const std::string bad = identity_mismatch(
            c, keys[mb][i], runs[static_cast<std::size_t>(r)].key_gathers[mb][i], plan, m);
        if (!bad.empty()) {
          return failure_prefix(c) +
                 fmt::format("key '{}' gathered on rank {}: ", keys[mb][i].name, r) + bad;
        }
      }
    }
    // Any token tensor, in each form a caller may pass it: the shard the reference gives, and
    // gathered back, the input (and the reference's gather).
    for (std::size_t i = 0; i < forms[mb].size(); ++i) {
      const Form& form = forms[mb][i];
      std::vector<Tensor> locals;
      for (std::int64_t r = 0; r < c.spec.cp; ++r) {
        locals.push_back(runs[static_cast<std::size_t>(r)].form_shards[mb][i]);
        const Tensor expected =
            reference::shard_token_tensor(plan, form.value, form.seq_dim, form.fill, r);
        TokenFrame frame{.what = fmt::format("shard_token_tensor ({}) on rank {}, microbatch {}",
                                             form.name, r, m),
                         .seq_dim = form.seq_dim,
                         .plan = &plan,
                         .locate_len = form.value.size(form.seq_dim)};
        for (const RowPlan& row : plan.rows)
          frame.slots.push_back(row.index[static_cast<std::size_t>(r)]);
        const std::string bad = tensor_mismatch(c, frame, expected, locals.back());
        if (!bad.empty()) return failure_prefix(c) + bad;
      }
      const Tensor expected = reference::gather_token_tensor(plan, locals, form.seq_dim, form.trim);
      for (std::int64_t r = 0; r < c.spec.cp; ++r) {
        const Tensor& gathered = runs[static_cast<std::size_t>(r)].form_gathers[mb][i];
        const std::string bad = form.identity ? identity_mismatch(c, form, gathered, plan, m) : "";
        if (!bad.empty()) return failure_prefix(c) + fmt::format("on rank {}: ", r) + bad;
        TokenFrame frame{.what = fmt::format("gather_token_tensor ({}) on rank {}, microbatch {}",
                                             form.name, r, m),
                         .seq_dim = form.seq_dim,
                         .plan = &plan,
                         .caller = form.trim};
        const std::string off_reference = tensor_mismatch(c, frame, expected, gathered);
        if (!off_reference.empty()) return failure_prefix(c) + off_reference;
      }
    }
  }
  return {};
}

}  // namespace

extern const PropertyInfo shard_gather_property;
const PropertyInfo shard_gather_property{
    .name = "shard_then_gather_is_identity",
    .invariant =
        "gather_token_tensor(trim) of every sharded key and of any token tensor (padded "
        "length, original length with fill, THD rows, seq dim 2) gives back the caller's "
        "tokens",
    .check = check_shard_gather,
    .coverage =
        {
            // Every form on every batch kind it applies to, in every dtype class and C class.
            {"L", {BatchKind::bshd, BatchKind::bshd_padded}, Cross::dtype_and_cp},
            {"L trim", {BatchKind::bshd, BatchKind::bshd_padded}, Cross::dtype_and_cp},
            {"L dim2", {BatchKind::bshd, BatchKind::bshd_padded}, Cross::dtype_and_cp},
            {"S fill", {BatchKind::bshd_padded}, Cross::dtype_and_cp},
            {"S fill dim2", {BatchKind::bshd_padded}, Cross::dtype_and_cp},
            {"THD", {BatchKind::packed}, Cross::dtype_and_cp},
            {"THD fill", {BatchKind::packed}, Cross::dtype_and_cp},
            {"THD dim2", {BatchKind::packed}, Cross::dtype_and_cp},
            // Packed rows as a padded-length tensor: only where the layout pads the row.
            {"L", {BatchKind::packed}, Cross::cp, true},
            {"L trim", {BatchKind::packed}, Cross::cp, true},
            {"keys kdt=wide", {}, Cross::cp},
            {"keys kdt=narrow"},
        },
};

}  // namespace cplab::properties
