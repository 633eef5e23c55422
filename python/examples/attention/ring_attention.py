"""Zigzag ring attention as CP code writes it (ring-flash-attention, TransformerEngine's
cp_comm_type="p2p"): K and V travel round the ring over dist.batch_isend_irecv, C steps; each step
attends the local queries to the block that arrived and merges the partial results through their
LSEs; the backward is a second ring in an autograd.Function in which dK and dV travel with their
K and V and arrive home after C steps.

Where the ranks hold the row zigzag (rank r holds chunks r and 2C-1-r of 2C, as the head-tail
layout splits it; ``meta.index`` says so) a block from an earlier rank is attended by all queries
against its first half only, one from a later rank by the second half of the queries only, as the
zigzag kernels skip what the causal mask hides; under any other layout every block is attended
whole. Each block's mask is built from its keys' documents and positions.

    cplab.testing.check_attention(ring_attention, LAYOUT, cp=[1, 2, 3, 4])

``bug=`` plants one of the bugs this kind of code has shipped with (the tests check that
check_attention catches each).
"""
import torch
import torch.distributed as dist

from local_kernel import Keys, attend, attend_backward, merge, visible

BUGS = ("stale_kv_backward", "merge_without_max", "wrong_zigzag_half", "ignores_grad_out")


def _ring_pass(tensors, meta):
    """Sends `tensors` to the next rank and returns the previous rank's (one batch of P2P ops).
    The CP group is ranks 0..C-1 of the world, so group ranks are the peers' global ranks."""
    size, rank = meta.cp_size, meta.cp_rank
    if size == 1:
        return list(tensors)
    received = [torch.empty_like(t) for t in tensors]
    ops = []
    for sent, into in zip(tensors, received):
        ops.append(dist.P2POp(dist.isend, sent.contiguous(), (rank + 1) % size, meta.group))
        ops.append(dist.P2POp(dist.irecv, into, (rank - 1) % size, meta.group))
    for request in dist.batch_isend_irecv(ops):
        request.wait()
    return received


def is_zigzag(meta):
    """Whether every rank r holds chunks r and 2C-1-r of the row's 2C equal chunks (one rank's
    slots alone can look so by chance: a round robin's middle rank at l = 2)."""
    size, length = meta.cp_size, meta.index.shape[1]
    if size == 1 or length % 2:
        return False
    held = [torch.empty_like(meta.index) for _ in range(size)]
    dist.all_gather(held, meta.index, group=meta.group)
    half = length // 2
    for rank, index in enumerate(held):
        zigzag = torch.cat([torch.arange(rank * half, (rank + 1) * half),
                            torch.arange((2 * size - 1 - rank) * half, (2 * size - rank) * half)])
        if not torch.equal(index[0], zigzag):
            return False
    return True


def _blocks(meta, step, length, wrong_half=False):
    """The query rows and key columns step `step` attends (slices of the local buffer). Skipping
    is for masks that see no later position: a bidirectional span can."""
    everything = slice(0, length)
    zigzag = meta.zigzag and not meta.mask.startswith("bidirectional")
    if not zigzag or step == 0:
        return everything, everything
    source = (meta.cp_rank - step) % meta.cp_size
    half = length // 2
    if source < meta.cp_rank:  # its chunks are both before ours: all queries, its first half
        return everything, (slice(half, length) if wrong_half else slice(0, half))
    return slice(half, length), everything  # its first chunk is before our second


def _forward(q, k, v, meta, bug):
    queries = Keys.of(meta)
    length = q.shape[1]
    out = torch.zeros(q.shape, dtype=torch.float32)
    lse = torch.full(q.shape[:3], float("-inf"))
    block_k, block_v, block_keys = k, v, Keys.of(meta)
    for step in range(meta.cp_size):
        if step + 1 < meta.cp_size:
            arriving = _ring_pass([block_k, block_v, block_keys.packed()], meta)
        rows, cols = _blocks(meta, step, length, bug == "wrong_zigzag_half")
        vis = visible(queries.part(rows), block_keys.part(cols), meta.mask)
        part_out, part_lse = attend(q[:, rows], block_k[:, cols], block_v[:, cols], vis,
                                    meta.softmax_scale)
        if bug == "merge_without_max":
            total = torch.exp(lse[:, rows]) + torch.exp(part_lse)
            merged = (out[:, rows] * torch.exp(lse[:, rows])[..., None]
                      + part_out * torch.exp(part_lse)[..., None]) / total[..., None]
            out[:, rows], lse[:, rows] = merged, torch.log(total)
        else:
            out[:, rows], lse[:, rows] = merge(out[:, rows], lse[:, rows], part_out, part_lse)
        if step + 1 < meta.cp_size:
            block_k, block_v, keys_packed = arriving
            block_keys = Keys.unpacked(keys_packed)
    return out, lse


def _backward(q, k, v, out, lse, dout, meta, bug):
    queries = Keys.of(meta)
    length = q.shape[1]
    if bug == "ignores_grad_out":
        dout = torch.ones_like(dout)
    delta = (dout.float() * out).sum(-1)
    dq = torch.zeros(q.shape, dtype=torch.float32)
    block_k, block_v, block_keys = k, v, Keys.of(meta)
    dk = torch.zeros(k.shape, dtype=torch.float32)
    dv = torch.zeros(v.shape, dtype=torch.float32)
    for step in range(meta.cp_size):
        rows, cols = _blocks(meta, step, length)
        vis = visible(queries.part(rows), block_keys.part(cols), meta.mask)
        part_dq, part_dk, part_dv = attend_backward(
            q[:, rows], block_k[:, cols], block_v[:, cols], dout[:, rows], lse[:, rows],
            delta[:, rows], vis, meta.softmax_scale)
        dq[:, rows] += part_dq
        dk[:, cols] += part_dk
        dv[:, cols] += part_dv
        # The block's dK and dV go on with it: after C passes both are back with their owner.
        if bug == "stale_kv_backward":
            dk, dv = _ring_pass([dk, dv], meta)
        else:
            block_k, block_v, keys_packed, dk, dv = _ring_pass(
                [block_k, block_v, block_keys.packed(), dk, dv], meta)
            block_keys = Keys.unpacked(keys_packed)
    return dq, dk, dv


class _RingAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, meta, bug):
        out, lse = _forward(q, k, v, meta, bug)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.meta, ctx.bug = meta, bug
        ctx.mark_non_differentiable(lse)
        return out.to(q.dtype), lse

    @staticmethod
    def backward(ctx, dout, _dlse):
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = _backward(q, k, v, out, lse, dout, ctx.meta, ctx.bug)
        return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), None, None


def ring_attention(q, k, v, meta, bug=None):
    """q [B, l, H, d] (or [l, H, d]), k, v [B, l, H_kv, d]: returns (out, lse)."""
    thd = q.dim() == 3
    if thd:
        q, k, v = q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
    meta.zigzag = is_zigzag(meta)
    out, lse = _RingAttention.apply(q, k, v, meta, bug)
    return (out[0], lse[0]) if thd else (out, lse)
