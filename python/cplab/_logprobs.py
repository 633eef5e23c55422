"""cplab.testing.check_logprobs: a user's RL log-prob pipeline (per-token log-probs computed on the
shards and gathered back to the caller's [B, S]) on real gloo ranks, against the unsharded
log_softmax(logits)[t, target(t)] (SPEC §6's target; 0 where a token has none)."""
import math
import time

import torch

from . import _cplab
from ._attention import Outcome, RankHung, _rows, groups_of
from ._error import Error

# f32 log-softmax against the double reference, relative to the value's own size.
TOLERANCE = 1e-4


def _messages(case, layout, inputs, world):
    order, per_rank = groups_of(case.cp, layout["ring_degree"])
    rows = layout["rows"]
    shape = (len(rows), layout["caller_len"])
    messages = []
    for r in range(world):
        if r >= case.cp:
            messages.append({"groups": order})
            continue
        index = torch.stack([row["index"][r] for row in rows])
        meta = {"cp_rank": r, "cp_size": case.cp, "layout": case.layout, "index": index,
                "valid": _rows(layout, index, "real"), "doc_ids": _rows(layout, index, "doc_ids"),
                "position_ids": _rows(layout, index, "position_ids"),
                "caller_pos": _rows(layout, index, "caller_pos"),
                "seq_len": layout["caller_len"], "padded_seq_len": layout["padded_len"]}
        if rows[0]["cu_seqlens"] is not None:
            meta["cu_seqlens"] = rows[0]["cu_seqlens"][r]
        messages.append({"kind": "logprobs", "groups": order, "groups_of_rank": per_rank[r],
                         "inputs": {"logits": inputs["logits"][r],
                                    "labels": inputs["unshifted_labels"][r]},
                         "meta": meta, "shape": shape})
    return messages


def expected(layout, inputs):
    """[B, S] log-probs of each caller token's target (0 where it has none) and entropies (0 at a
    caller position no rank holds: a layout may drop the caller's own padding)."""
    rows = layout["rows"]
    shape = (len(rows), layout["caller_len"])
    logprobs = torch.zeros(shape, dtype=torch.float64)
    entropy = torch.zeros(shape, dtype=torch.float64)
    has_target = torch.zeros(shape, dtype=torch.bool)
    for r, (logits, targets) in enumerate(zip(inputs["logits"], inputs["next_labels"])):
        log_p = torch.log_softmax(logits.double(), dim=-1)
        for b, row in enumerate(rows):
            caller = row["caller_pos"][row["index"][r]]
            at = caller >= 0
            spots = caller[at]
            t = targets[b][at]
            ok = t >= 0
            taken = log_p[b][at].gather(-1, t.clamp(min=0)[:, None])[:, 0]
            logprobs[b, spots] = torch.where(ok, taken, torch.zeros_like(taken))
            has_target[b, spots] = ok
            entropy[b, spots] = -(log_p[b][at].exp() * log_p[b][at]).sum(-1)
    return logprobs, entropy, has_target


def evaluate(pool, line, options):
    started = time.perf_counter()
    outcome = Outcome(line)
    case = _cplab._Case(line, False)
    outcome.headline = case.headline
    layout = case.attention_layout()
    inputs = case.loss_inputs()
    clock = time.perf_counter()
    want_logprobs, want_entropy, has_target = expected(layout, inputs)
    outcome.seconds["reference"] = time.perf_counter() - clock
    replies, stuck = pool.run(_messages(case, layout, inputs, pool.world), options["rank_timeout"])
    if stuck:
        raise RankHung(f"{options['fn_name']} on {case.headline}: ranks {stuck} gave no reply "
                       f"within rank_timeout={options['rank_timeout']:g} s (a hang is not "
                       f"shrunk) · case: {line}", kind="check_failed", case=line, rank=stuck[0])
    for rank, reply in enumerate(replies[:case.cp]):
        if reply is None or reply[0] == "done":
            continue
        if reply[0] == "internal":  # a bug of cplab's own, not the pipeline's
            raise Error(" ".join(f"cplab's rank process failed: {reply[1]}".split()),
                        kind="internal")
        what = {"raised": "fn raised", "died": "its process died",
                "contract": "fn broke its contract"}[reply[0]]
        outcome.reason = f"{what} on rank {rank}: {reply[-1]}"
        outcome.rank = rank
        outcome.seconds["total"] = time.perf_counter() - started
        return outcome
    pairs = {reply[2] is not None for reply in replies[:case.cp]}
    if len(pairs) > 1:
        outcome.reason = ("fn broke its contract: some ranks returned (logprobs, entropy) and "
                          "others logprobs alone")
        outcome.seconds["total"] = time.perf_counter() - started
        return outcome
    outcome.seconds["fn"] = max(reply[-1] for reply in replies[:case.cp])
    for rank, reply in enumerate(replies[:case.cp]):
        _, got_logprobs, got_entropy, _ = reply
        for name, got, want, where in (("logprobs", got_logprobs, want_logprobs, None),
                                       ("entropy", got_entropy, want_entropy, None)):
            if got is None:
                continue
            error = torch.nan_to_num((got - want).abs(), nan=math.inf)
            bad = error > TOLERANCE * want.abs().clamp(min=1.0)
            if bool(bad.any()):
                b, p = bad.nonzero()[0].tolist()
                target = ("no target (0)" if not has_target[b, p]
                          else f"log p of its target {want[b, p].item():.6g}")
                outcome.reason = (f"rank {rank}'s gathered {name} at row {b} position {p} is "
                                  f"{got[b, p].item():.6g}, should be "
                                  + (f"{want[b, p].item():.6g}" if name == "entropy" else target))
                outcome.rank, outcome.tensor = rank, name
                outcome.seconds["total"] = time.perf_counter() - started
                return outcome
    outcome.seconds["total"] = time.perf_counter() - started
    return outcome
