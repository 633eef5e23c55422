"""The block kernel the CP attentions in this folder call: one block of queries against one block
of keys under a boolean mask, forward (out and LSE) and backward (dQ, dK, dV given the final LSE),
in float32 whatever the input dtype, with GQA (query head h reads KV head h * H_kv / H). It stands
in for flash-attn's block kernel: what the examples get right or wrong is how they move blocks
between ranks, merge them and build each block's mask.

Masks are built from what cplab.testing.check_attention hands each rank in ``meta``: a token's
document (0 on padding), its position in its document as masks measure it, whether it is real,
and its bidirectional span (0: none).
"""
import math

import torch


class Keys:
    """What a block's keys carry for the mask: document, position, real, span; [B, l] each."""

    def __init__(self, doc, pos, valid, span):
        self.doc, self.pos, self.valid, self.span = doc, pos, valid, span

    @staticmethod
    def of(meta):
        return Keys(meta.doc_ids, meta.positions, meta.valid, meta.spans)

    def packed(self):
        """One int64 tensor [4, B, l], to send to another rank in one message."""
        return torch.stack([self.doc, self.pos, self.valid.long(), self.span])

    @staticmethod
    def unpacked(t):
        return Keys(t[0], t[1], t[2].bool(), t[3])

    def part(self, sel):
        return Keys(self.doc[:, sel], self.pos[:, sel], self.valid[:, sel], self.span[:, sel])


def visible(queries, keys, mask):
    """bool [B, lq, lk]: query i sees key j (SPEC §13.5)."""
    same = ((queries.doc[:, :, None] == keys.doc[:, None, :]) & queries.valid[:, :, None]
            & keys.valid[:, None, :])
    back = queries.pos[:, :, None] - keys.pos[:, None, :]
    if mask == "causal":
        rule = back >= 0
    elif mask.startswith("window:"):
        rule = (back >= 0) & (back < int(mask.split(":")[1]))
    elif mask.startswith("chunked:"):
        size = int(mask.split(":")[1])
        rule = (back >= 0) & (queries.pos[:, :, None] // size == keys.pos[:, None, :] // size)
    elif mask.startswith("bidirectional"):
        span = queries.span[:, :, None]
        rule = (back >= 0) | ((span > 0) & (span == keys.span[:, None, :]))
    else:
        raise ValueError(f"mask {mask!r} is not one this kernel knows")
    return same & rule


def _expand(kv, heads):
    return kv.repeat_interleave(heads // kv.shape[2], dim=2)


def attend(q, k, v, vis, scale):
    """q [B, lq, H, d], k, v [B, lk, H_kv, d], vis [B, lq, lk] -> out [B, lq, H, d] and lse
    [B, lq, H], float32; a query that sees nothing gives 0 and -inf."""
    heads = q.shape[2]
    scores = torch.einsum("bqhd,bkhd->bhqk", q.float(), _expand(k, heads).float()) * scale
    scores = scores.masked_fill(~vis[:, None], -math.inf)
    lse = torch.logsumexp(scores, dim=-1)
    probs = torch.nan_to_num(torch.exp(scores - lse[..., None]), nan=0.0)
    out = torch.einsum("bhqk,bkhd->bqhd", probs, _expand(v, heads).float())
    return out, lse.transpose(1, 2)


def attend_backward(q, k, v, dout, lse, delta, vis, scale):
    """The block's share of dQ, dK, dV (float32), given the query rows' final lse [B, lq, H] and
    delta = rowsum(dout * out) [B, lq, H]."""
    heads, kv_heads = q.shape[2], k.shape[2]
    qf, kf, vf = q.float(), _expand(k, heads).float(), _expand(v, heads).float()
    scores = torch.einsum("bqhd,bkhd->bhqk", qf, kf) * scale
    scores = scores.masked_fill(~vis[:, None], -math.inf)
    probs = torch.nan_to_num(torch.exp(scores - lse.transpose(1, 2)[..., None]), nan=0.0)
    dv = torch.einsum("bhqk,bqhd->bkhd", probs, dout.float())
    dp = torch.einsum("bqhd,bkhd->bhqk", dout.float(), vf)
    ds = probs * (dp - delta.transpose(1, 2)[..., None])
    dq = torch.einsum("bhqk,bkhd->bqhd", ds, kf) * scale
    dk = torch.einsum("bhqk,bqhd->bkhd", ds, qf) * scale
    group = heads // kv_heads
    shape = (dk.shape[0], dk.shape[1], kv_heads, group, dk.shape[3])
    return dq, dk.reshape(shape).sum(3), dv.reshape(shape).sum(3)


def merge(out, lse, block_out, block_lse):
    """Adds a block's (out, lse) to the running ones: out weighted by exp(lse - new lse), the
    max-subtracted form that stays finite at any magnitude."""
    new = torch.logaddexp(lse, block_lse)
    keep = torch.nan_to_num(torch.exp(lse - new), nan=0.0)[..., None]
    take = torch.nan_to_num(torch.exp(block_lse - new), nan=0.0)[..., None]
    return out * keep + block_out * take, new
