"""All-gather-KV attention as llama3's CP and Megatron's all-gather CP write it: every rank
all-gathers K and V (an autograd.Function whose backward sums each rank's dK, dV over the group
and keeps its own part) and attends its queries to the keys it needs.

Under llama3-varlen (packed rows) the keys are put in global order, sliced to the rank's
``meta.k_slice`` and attended segment by segment through ``meta.cu_seqlens_q`` /
``meta.cu_seqlens_k``, causal aligned bottom-right as flash-attention's varlen kernel aligns it;
under any other layout every key is attended, its mask built from its document and position.

    cplab.testing.check_attention(allgather_attention, LAYOUT, cp=[1, 2, 3, 4])

``bug=`` plants one of the bugs this kind of code has shipped with.
"""
import torch
import torch.distributed as dist

from local_kernel import Keys, attend, visible

BUGS = ("cp_off", "wrong_gather_dim", "dkv_not_summed", "top_left_diagonal")


def _all_gather(x, meta):
    """[C, ...]: every rank's x, in rank order (gloo gathers float32 and int64)."""
    wide = x.float() if x.is_floating_point() else x
    parts = [torch.empty_like(wide) for _ in range(meta.cp_size)]
    dist.all_gather(parts, wide.contiguous(), group=meta.group)
    return torch.stack(parts).to(x.dtype)


class _GatherKV(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, meta, bug):
        ctx.meta, ctx.bug = meta, bug
        return _all_gather(x, meta)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.float().contiguous()
        if ctx.bug != "dkv_not_summed":  # every rank's queries read this rank's keys
            dist.all_reduce(grad, group=ctx.meta.group)
        return grad[ctx.meta.cp_rank].to(ctx.meta.kv_dtype), None, None


def _sequence(parts, bug):
    """[C, B, l, ...] -> [B, C*l, ...]: the ranks' shards one after another."""
    if bug == "wrong_gather_dim":  # concatenated on the heads, then viewed as a sequence
        return torch.cat(list(parts), dim=2).reshape(parts.shape[1], -1, *parts.shape[3:])
    return parts.transpose(0, 1).reshape(parts.shape[1], -1, *parts.shape[3:])


def _varlen(q, k_glob, v_glob, keys_glob, queries, meta, bug):
    """Query segment s against key segment s of the rank's key slice, causal bottom-right."""
    begin, end = meta.k_slice
    k_glob, v_glob, keys = k_glob[:, begin:end], v_glob[:, begin:end], keys_glob.part(
        slice(begin, end))
    cu_q, cu_k = meta.cu_seqlens_q.tolist(), meta.cu_seqlens_k.tolist()
    window = int(meta.mask.split(":")[1]) if meta.mask.startswith("window:") else None
    if meta.mask != "causal" and window is None:
        raise ValueError(f"the varlen path runs causal and window masks, not {meta.mask}")
    outs, lses = [], []
    for s in range(len(cu_q) - 1):
        rows, cols = slice(cu_q[s], cu_q[s + 1]), slice(cu_k[s], cu_k[s + 1])
        len_q, len_k = cu_q[s + 1] - cu_q[s], cu_k[s + 1] - cu_k[s]
        j = torch.arange(len_q)[:, None]
        t = torch.arange(len_k)[None, :]
        diagonal = j if bug == "top_left_diagonal" else j + (len_k - len_q)
        rule = t <= diagonal
        if window is not None:
            rule &= t > diagonal - window
        vis = (rule[None] & queries.valid[:, rows, None] & keys.valid[:, None, cols])
        out, lse = attend(q[:, rows], k_glob[:, cols], v_glob[:, cols], vis, meta.softmax_scale)
        outs.append(out)
        lses.append(lse)
    return torch.cat(outs, dim=1), torch.cat(lses, dim=1)


def allgather_attention(q, k, v, meta, bug=None):
    """q [B, l, H, d] (or [l, H, d]), k, v [B, l, H_kv, d]: returns (out, lse)."""
    thd = q.dim() == 3
    if thd:
        q, k, v = q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
    meta.kv_dtype = k.dtype
    queries = Keys.of(meta)
    if bug == "cp_off":  # each rank attends its own shard only
        k_all, v_all, keys = k, v, queries
        slots = meta.index
    else:
        k_all = _sequence(_GatherKV.apply(k, meta, bug), bug)
        v_all = _sequence(_GatherKV.apply(v, meta, bug), bug)
        facts = _all_gather(queries.packed(), meta)  # [C, 4, B, l]
        keys = Keys.unpacked(torch.stack([_sequence(facts[:, f], None) for f in range(4)]))
        slots = _sequence(_all_gather(meta.index, meta), None)
    if getattr(meta, "cu_seqlens_q", None) is not None:
        order = torch.argsort(slots[0])  # the keys in global order (B = 1: one packed row)
        out, lse = _varlen(q, k_all[:, order], v_all[:, order], keys.part(order), queries, meta,
                           bug)
    else:
        out, lse = attend(q, k_all, v_all, visible(queries, keys, meta.mask), meta.softmax_scale)
    out = out.to(q.dtype)
    return (out[0], lse[0]) if thd else (out, lse)
