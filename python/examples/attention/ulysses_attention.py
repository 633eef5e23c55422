"""Ulysses attention as DeepSpeed-Ulysses and yunchang write it: an all-to-all over the CP group
trades the sequence split for a head split (each rank then holds every token of H/C query heads),
the tokens are put back in global order, a varlen causal kernel attends the whole row (documents
by their ids, causal by slot order), and a second all-to-all trades back. GQA: KV heads are split
over the ranks when C divides them, else repeated until each rank has one.

    cplab.testing.check_attention(ulysses_attention, "head_tail", algo="ulysses", cp=[1, 2, 4])

``algo="ulysses"`` makes check_attention draw head counts divisible by C. It returns out only (no
LSE). ``bug=`` plants one of the bugs this kind of code has shipped with.
"""
import torch
import torch.distributed as dist

from local_kernel import attend

BUGS = ("output_transposed", "rank_order", "drop_remainder")


class _AllToAll(torch.autograd.Function):
    """x [C, ...]: part j goes to rank j; returns [C, ...], part i from rank i. Its own inverse,
    so the backward is the same exchange of the gradient."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return _exchange(x, group)

    @staticmethod
    def backward(ctx, grad):
        return _exchange(grad, ctx.group), None


def _exchange(x, group):
    wide = x.float().contiguous()  # gloo exchanges float32
    out = torch.empty_like(wide)
    dist.all_to_all_single(out, wide, group=group)
    return out.to(x.dtype)


def _gather(x, meta):
    parts = [torch.empty_like(x) for _ in range(meta.cp_size)]
    dist.all_gather(parts, x.contiguous(), group=meta.group)
    return torch.cat(parts, dim=1)  # [B, C*l]: the ranks' slots in rank order


def _heads_to_ranks(x, size):
    """[B, l, H, d] -> [C, B, l, H/C, d]."""
    b, length, heads, d = x.shape
    return x.reshape(b, length, size, heads // size, d).permute(2, 0, 1, 3, 4)


def _varlen_causal(q, k, v, slots, doc, valid, meta, keep):
    """Causal within each document by global slot order, on the whole row."""
    same = (doc[:, :, None] == doc[:, None, :]) & valid[:, :, None] & valid[:, None, :]
    back = slots[:, :, None] - slots[:, None, :]
    rule = back >= 0
    if meta.mask.startswith("window:"):
        rule &= back < int(meta.mask.split(":")[1])
    elif meta.mask != "causal":
        raise ValueError(f"this kernel runs causal and window masks, not {meta.mask}")
    vis = same & rule & keep[:, None, :]
    return attend(q, k, v, vis, meta.softmax_scale)[0]


def ulysses_attention(q, k, v, meta, bug=None):
    """q [B, l, H, d] (or [l, H, d]), k, v [B, l, H_kv, d]: returns out."""
    thd = q.dim() == 3
    if thd:
        q, k, v = q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
    size = meta.cp_size
    b, length, heads, d = q.shape
    if k.shape[2] % size != 0:  # fewer KV heads than ranks: each rank gets a copy of its head
        k = k.repeat_interleave(size // k.shape[2], dim=2)
        v = v.repeat_interleave(size // v.shape[2], dim=2)

    def to_sequence(x):  # [B, l, h, d] -> [B, C*l, h/C, d], the ranks' shards in rank order
        parts = _AllToAll.apply(_heads_to_ranks(x, size), meta.group)
        return parts.transpose(0, 1).reshape(b, size * length, x.shape[2] // size, d)

    q_seq, k_seq, v_seq = to_sequence(q), to_sequence(k), to_sequence(v)
    slots = _gather(meta.index, meta)
    doc = _gather(meta.doc_ids, meta)
    valid = _gather(meta.valid.long(), meta).bool()
    rows = torch.arange(b)[:, None]
    order = torch.argsort(slots, dim=1)  # rank order -> global order
    if bug == "rank_order":  # as if the ranks' shards were the row's consecutive pieces
        order = torch.arange(size * length).expand(b, -1)
    keep = torch.ones_like(valid)
    if bug == "drop_remainder":  # attends the first (S // C) * C tokens of S
        real = int(valid[0].sum())
        keep = torch.arange(size * length)[None, :] < (real // size) * size
    sorted_slots = torch.arange(size * length).expand(b, -1)
    out = _varlen_causal(q_seq[rows, order], k_seq[rows, order], v_seq[rows, order],
                         sorted_slots, doc[rows, order], valid[rows, order], meta, keep)
    out = out[rows, torch.argsort(order, dim=1)]  # back to rank order
    parts = out.reshape(b, size, length, heads // size, d).transpose(0, 1)
    back = _AllToAll.apply(parts.contiguous(), meta.group)  # [C, B, l, H/C, d]: head group j
    if bug == "output_transposed":
        out = back.reshape(b, length, heads, d)
    else:
        out = back.permute(1, 2, 0, 3, 4).reshape(b, length, heads, d)
    out = out.to(q.dtype)
    return out[0] if thd else out
