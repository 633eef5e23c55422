"""A THD sharder in the style of TransformerEngine's thd_get_partitioned_indices callers: every
document of a packed row is padded to a multiple of 2C, each rank takes, document by document,
chunks r and 2C-1-r of it, and every rank's cu_seqlens is cu_seqlens_padded / C.

    cplab.testing.check_sharder(shard_thd, "thd", pad_id=0)
"""
import torch

PAD_ID = 0
IGNORE = -100
PAD = {"input_ids": PAD_ID, "labels": IGNORE, "padding_mask": True}  # masks, others: 0


def _cu(lengths):
    return torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(lengths, 0)])


def _positions(lengths, total):
    """Positions restarting at every document and running on through its padding (the slots
    past the last document continue it)."""
    starts = _cu(lengths)[:-1]
    doc = torch.bucketize(torch.arange(total), _cu(lengths)[1:], right=True)
    doc = doc.clamp(max=len(lengths) - 1)
    return torch.arange(total) - starts[doc]


def _caller_positions(lengths, total):
    """Positions of the caller's own row (CP off): restarting at the first token of every
    document that has one, running on everywhere else (row padding continues the last)."""
    starts = (torch.cumsum(lengths, 0) - lengths)[lengths > 0]
    first = torch.zeros(total, dtype=torch.bool)
    first[starts[starts < total]] = True
    first[0] = True
    group_start = torch.cummax(torch.where(first, torch.arange(total), 0), 0).values
    return torch.arange(total) - group_start


def shard_thd(batch, cp_rank, cp_size, positions_after_cut=False):
    seq_lens = batch["seq_lens"][0]
    lens = seq_lens[seq_lens >= 0]
    caller_lens = batch["seq_lens_padded"][0] if "seq_lens_padded" in batch else seq_lens
    caller_lens = caller_lens[caller_lens >= 0]
    caller_starts = _cu(caller_lens)[:-1]
    tokens = {k: v for k, v in batch.items() if torch.is_tensor(v) and v.dim() == 2
              and not k.startswith("seq_lens")}
    seq = tokens["labels"].shape[1]
    if cp_size == 1:  # CP off: the row as it is, positions from the caller's own layout
        out = dict(tokens)
        if "position_ids" not in out:
            out["position_ids"] = _caller_positions(caller_lens, seq).unsqueeze(0)
        out["cu_seqlens"] = _cu(caller_lens)
        return out
    unit = 2 * cp_size
    padded = (lens + unit - 1) // unit * unit
    total = max(int(padded.sum()), -(-seq // unit) * unit)
    padded[-1] += total - int(padded.sum())  # row padding goes to the last document
    starts = _cu(padded)[:-1]
    # The padded stream: each document's real tokens first, then its padding.
    source = torch.full((total,), -1, dtype=torch.long)
    for start, caller_start, n in zip(starts.tolist(), caller_starts.tolist(), lens.tolist()):
        source[start:start + n] = torch.arange(caller_start, caller_start + n)
    real = source >= 0
    out = {}
    for key, value in tokens.items():
        stream = torch.full((1, total), PAD.get(key, 0), dtype=value.dtype)
        stream[:, real] = value[:, source[real]]
        out[key] = stream
    if "position_ids" in tokens:  # the caller's, and pad slots continue the slot before them
        dtype = tokens["position_ids"].dtype
        stream = out["position_ids"][0].tolist()
        for t in range(total):
            if not real[t]:
                stream[t] = stream[t - 1] + 1 if t > 0 else 0
        out["position_ids"] = torch.tensor([stream], dtype=dtype)
    else:  # restarting per document on the re-laid stream, running on through its padding
        dtype = torch.long
        out["position_ids"] = _positions(padded, total).unsqueeze(0)
    index = []
    for start, length in zip(starts.tolist(), padded.tolist()):
        chunk = length // unit
        tail = unit - 1 - cp_rank
        index += range(start + cp_rank * chunk, start + (cp_rank + 1) * chunk)
        index += range(start + tail * chunk, start + (tail + 1) * chunk)
    index = torch.tensor(index, dtype=torch.long)
    shard = {k: v.index_select(1, index) for k, v in out.items()}
    if positions_after_cut:
        shard["position_ids"] = torch.arange(len(index), dtype=dtype).unsqueeze(0)
    shard["cu_seqlens"] = _cu(padded) // cp_size
    return shard
