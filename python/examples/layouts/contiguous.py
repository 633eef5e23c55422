"""Model-owned contiguous CP (Mistral-Large-4, DeepSeek-V4 style): pad the row to a multiple of
C*m and give rank r the r-th contiguous slice; packed rows keep their documents whole, positions
computed per document before the cut. With it, the rank-local cross-entropy such code computes:
targets already shifted, summed, normalised by the global count of contributing tokens and scaled
by C (FSDP averages gradients over the CP group).

    cplab.testing.check_sharder(shard_contiguous, "contiguous", pad_multiple=2, pad_id=0)
    cplab.testing.check_loss(cp_cross_entropy, "contiguous", pad_multiple=2)
"""
import torch
import torch.nn.functional as F

PAD_ID = 0
IGNORE = -100
PAD_MULTIPLE = 2
PAD = {"input_ids": PAD_ID, "labels": IGNORE, "padding_mask": True}  # masks, others: 0


def _positions(batch, seq):
    """The caller's positions, or positions restarting at every document (a BSHD row is one)."""
    if "position_ids" in batch:
        return batch["position_ids"]
    rows = batch["labels"].shape[0]
    if "seq_lens" not in batch:
        return torch.arange(seq).expand(rows, seq).clone()
    lens = batch["seq_lens_padded"][0] if "seq_lens_padded" in batch else batch["seq_lens"][0]
    lens = lens[lens >= 0]
    # Restart at the first token of every document that has one; run on everywhere else (its
    # own padding, and the row padding after the last document).
    starts = (torch.cumsum(lens, 0) - lens)[lens > 0]
    first = torch.zeros(seq, dtype=torch.bool)
    first[starts[starts < seq]] = True
    first[0] = True
    group_start = torch.cummax(torch.where(first, torch.arange(seq), 0), 0).values
    return (torch.arange(seq) - group_start).unsqueeze(0)


def shard_contiguous(batch, cp_rank, cp_size, pad_multiple=PAD_MULTIPLE):
    tokens = {k: v for k, v in batch.items() if torch.is_tensor(v) and v.dim() == 2
              and not k.startswith("seq_lens")}
    seq = tokens["labels"].shape[1]
    tokens["position_ids"] = _positions(batch, seq)
    if cp_size == 1:
        return tokens
    unit = cp_size * pad_multiple
    padded_len = -(-seq // unit) * unit
    local = padded_len // cp_size
    shard = {}
    for key, value in tokens.items():
        if padded_len > seq:
            if key == "position_ids":  # padding continues the last position
                extra = value[:, -1:] + torch.arange(1, padded_len - seq + 1, dtype=value.dtype)
            else:
                extra = torch.full((value.shape[0], padded_len - seq), PAD.get(key, 0),
                                   dtype=value.dtype)
            value = torch.cat([value, extra], dim=1)
        shard[key] = value[:, cp_rank * local:(cp_rank + 1) * local]
    return shard


def cp_cross_entropy(logits, labels, cp_rank, cp_size, group, count_pads=False):
    """Rank-local loss over already-shifted labels: sum of CE * C / N, N summed over the group."""
    contributing = labels.numel() if count_pads else (labels != IGNORE).sum()
    total = group.all_reduce(torch.as_tensor(contributing, dtype=torch.float64))
    ce = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE,
                         reduction="sum")
    loss = ce * cp_size / total.clamp(min=1).to(ce.dtype)
    (grad,) = torch.autograd.grad(loss, logits)
    return loss, grad
