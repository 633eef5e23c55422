"""Per-token log-probs under CP as RL trainers compute them (verl's compute_token_logprobs on the
shards, then gather_token_tensor(local, trim=True)): each local token's target is the next label
in its document, fetched from whichever rank holds it; the log-probs and entropies are computed
on the shard and all-gathered back into the caller's [B, S] order, the layout's padding trimmed.

    cplab.testing.check_logprobs(token_logprobs, LAYOUT, cp=[1, 2, 3, 4])

``bug=`` plants one of the bugs such pipelines have shipped with: "roll_over_row" (targets made
with torch.roll over the whole packed row: a document's last token takes the next document's
first token, verl PR 6564), "roll_after_split" (labels rolled on the shard after the CP split:
wrong targets at every shard's end, verl PR 4250), "trim_twice" (the last rank's logits trimmed
once more: its log-probs one position off, slime PR 1377).
"""
import torch
import torch.distributed as dist

IGNORE = -100
BUGS = ("roll_over_row", "roll_after_split", "trim_twice")


def _all_gather(x, meta):
    """[C, ...]: every rank's x (gloo gathers float32 and int64)."""
    parts = [torch.empty_like(x) for _ in range(meta.cp_size)]
    dist.all_gather(parts, x.contiguous(), group=meta.group)
    return torch.stack(parts)


def _global(values, meta, fill):
    """[B, L]: every rank's [B, l] values at their global slots."""
    parts, slots = _all_gather(values, meta), _all_gather(meta.index, meta)
    rows = values.shape[0]
    out = torch.full((rows, meta.padded_seq_len), fill, dtype=values.dtype)
    for part, where in zip(parts, slots):
        out.scatter_(1, where, part)
    return out


def _targets(labels, meta, bug):
    """Each local token's target: the next label of its document, IGNORE where there is none."""
    if bug == "roll_after_split":
        rolled = torch.roll(labels, -1, dims=1)
        rolled[:, -1] = IGNORE
        return rolled
    every = _global(labels, meta, IGNORE)
    following = torch.roll(every, -1, dims=1)
    following[:, -1] = IGNORE
    if bug != "roll_over_row":
        docs = _global(meta.doc_ids.long(), meta, 0)
        same = (torch.roll(docs, -1, dims=1) == docs) & (docs > 0)
        following = torch.where(same, following, torch.full_like(following, IGNORE))
    return following.gather(1, meta.index)


def token_logprobs(logits, labels, meta, bug=None):
    """logits [B, l, V] and labels [B, l] of this rank -> (logprobs, entropy), each [B, S]."""
    target = _targets(labels, meta, bug)
    log_p = torch.log_softmax(logits.float(), dim=-1)
    picked = log_p.gather(-1, target.clamp(min=0)[..., None])[..., 0]
    local = torch.where(target >= 0, picked, torch.zeros_like(picked))
    entropy = -(log_p.exp() * log_p).sum(-1)
    if bug == "trim_twice" and meta.cp_rank == meta.cp_size - 1:
        local = torch.cat([torch.zeros_like(local[:, :1]), local[:, :-1]], dim=1)
    # Back to the caller's [B, S]: every rank's values at the caller positions its slots hold.
    rows = logits.shape[0]
    out = torch.zeros(2, rows, meta.seq_len, dtype=torch.float32)
    values = _all_gather(torch.stack([local, entropy]), meta)
    places = _all_gather(meta.caller_pos, meta)
    for part, where in zip(values, places):
        for b in range(rows):
            kept = where[b] >= 0
            out[:, b, where[b][kept]] = part[:, b, kept]
    return out[0], out[1]
