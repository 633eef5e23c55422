"""A head-tail ("zigzag") sharder as Megatron's get_batch_on_this_cp_rank and torch's
context_parallel round robin write it, for BSHD rows: pad each row to a multiple of 2C, cut it
into 2C chunks, and give rank r chunks r and 2C-1-r.

    cplab.testing.check_sharder(shard_head_tail, "head-tail", rows="bshd", pad_id=0)
"""
import torch

PAD_ID = 0
IGNORE = -100


def _pad_value(key, values):
    """SPEC §2's pad of each key, as a tensor of the added slots' values (positions continue)."""
    if key == "input_ids":
        return PAD_ID
    if key == "labels":
        return IGNORE
    if key == "padding_mask":
        return True
    return 0  # valid, loss_mask


def _pad_row(key, value, padded_len):
    seq = value.shape[1]
    if padded_len == seq:
        return value
    if key == "position_ids":  # continue each row: last + 1, last + 2, ...
        last = value[:, -1:]
        steps = torch.arange(1, padded_len - seq + 1, dtype=value.dtype).unsqueeze(0)
        return torch.cat([value, last + steps], dim=1)
    extra = torch.full((value.shape[0], padded_len - seq), _pad_value(key, value),
                       dtype=value.dtype)
    return torch.cat([value, extra], dim=1)


def shard_head_tail(batch, cp_rank, cp_size, tail_chunk=None):
    tokens = {k: v for k, v in batch.items() if torch.is_tensor(v) and v.dim() == 2}
    rows, seq = tokens["labels"].shape
    if "position_ids" not in tokens:  # computed before partitioning, on the whole row
        tokens["position_ids"] = torch.arange(seq).expand(rows, seq).clone()
    if cp_size == 1:
        return tokens
    chunks = 2 * cp_size
    padded_len = -(-seq // chunks) * chunks
    chunk = padded_len // chunks
    tail = 2 * cp_size - 1 - cp_rank if tail_chunk is None else tail_chunk(cp_rank, cp_size)
    index = torch.cat([torch.arange(cp_rank * chunk, (cp_rank + 1) * chunk),
                       torch.arange(tail * chunk, (tail + 1) * chunk)])
    return {k: _pad_row(k, v, padded_len).index_select(1, index) for k, v in tokens.items()}
