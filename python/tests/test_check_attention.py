"""cplab.testing.check_attention's own contract: what it hands a rank, how it judges (the
tolerance calibrated on the user's kernel, SPEC §13.6), and a rank that hangs. Attentions that
misbehave otherwise and bad keywords are in test_hostile_inputs.py; the example attentions' own
tests are in attention/."""
import time

import pytest
import torch
import torch.distributed as dist

import cplab
import layout_kinds
from allgather_attention import allgather_attention
from cplab.testing import check_attention, replay_attention
from ring_attention import ring_attention

PLAIN = layout_kinds.a_plain_layout()


# ---- attentions that misbehave, each built on the correct all-gather example ----

def hangs_on_last_rank(q, k, v, meta):
    if meta.cp_size > 1 and meta.cp_rank == meta.cp_size - 1:
        while True:
            time.sleep(0.05)
    return allgather_attention(q, k, v, meta)


def hangs_before_the_ring(q, k, v, meta):
    """The last rank never sends: the first waits in a P2P request's wait() (C++, no frame of
    torch.distributed's Python on its stack)."""
    if meta.cp_size > 1 and meta.cp_rank == meta.cp_size - 1:
        while True:
            time.sleep(0.05)
    if meta.cp_size > 1 and meta.cp_rank == 0:
        arriving = torch.empty_like(k)
        dist.irecv(arriving, meta.cp_size - 1, group=meta.group).wait()
    return ring_attention(q, k, v, meta)


def forward_only_rounded(q, k, v, meta):
    """Forward only (no autograd), right: checked with backward=False."""
    with torch.no_grad():
        return allgather_attention(q, k, v, meta)


def padding_reads_real_keys(q, k, v, meta):
    """Right, except that its padding queries' outputs depend on the real keys (as a plain causal
    kernel's do on padded rows): harmless, since a loss gives padding no gradient."""
    out, lse = allgather_attention(q, k, v, meta)
    return out + (~meta.valid).to(out.dtype)[..., None, None] * k.sum(), lse


def skips_a_collective_on_rank_zero(q, k, v, meta):
    if meta.cp_rank == 0 and meta.cp_size > 1:
        return allgather_attention(q, k, v, meta, bug="cp_off")
    return allgather_attention(q, k, v, meta)


def dkv_not_summed(q, k, v, meta):
    return allgather_attention(q, k, v, meta, bug="dkv_not_summed")


def rounds_dq_to_bf16(q, k, v, meta):
    """Correct, except that dQ is rounded to bfloat16 on its way back under CP (the precision
    regression ring-flash-attention's fp16 path has): only the calibrated tolerance sees it."""
    return allgather_attention(_RoundGrad.apply(q, meta.cp_size), k, v, meta)


class _RoundGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, size):
        ctx.size = size
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return (grad.to(torch.bfloat16).to(grad.dtype) if ctx.size > 1 else grad), None


def writes_padding(q, k, v, meta):
    out, lse = allgather_attention(q, k, v, meta)
    return out + (~meta.valid).to(out.dtype)[..., None, None], lse


def records_meta(q, k, v, meta):
    """Checks on the rank what meta holds against the shards, then attends."""
    assert meta.index.shape == q.shape[:2] and meta.index.dtype == torch.int64
    assert meta.valid.dtype == torch.bool and meta.doc_ids.shape == q.shape[:2]
    assert abs(meta.softmax_scale - q.shape[-1] ** -0.5) < 1e-12
    assert dist.get_world_size(meta.group) == meta.cp_size
    assert dist.get_rank(meta.group) == meta.cp_rank
    assert bool((meta.doc_ids[meta.valid] > 0).all())  # a real token is in a document
    gathered = [torch.empty_like(meta.index) for _ in range(meta.cp_size)]
    dist.all_gather(gathered, meta.index, group=meta.group)
    slots = torch.cat(gathered, dim=1)[0]
    assert sorted(slots.tolist()) == list(range(meta.padded_seq_len))
    return allgather_attention(q, k, v, meta)


# ---- what it hands over and how it judges ----

def test_meta_describes_the_shards_and_the_group():
    summary = check_attention(records_meta, PLAIN, cp=[1, 2, 3], cases=20, seed=5)
    assert summary.cases == 20 and summary.cases_per_second > 0
    assert 0 <= summary.fn_share <= 1 and 0 <= summary.reference_share <= 1
    assert "cases/s" in repr(summary)


def test_a_precision_regression_under_cp_is_caught_and_half_precision_is_not():
    check_attention(allgather_attention, PLAIN, cp=[2, 3], dtype=torch.float16, cases=20, seed=6)
    with pytest.raises(cplab.Error) as caught:
        check_attention(rounds_dq_to_bf16, PLAIN, cp=[2, 3], dtype=torch.float16, cases=100,
                        seed=6)
    assert caught.value.tensor == "dq" and "bound" in str(caught.value)


def test_padding_queries_that_read_real_keys_do_not_change_their_grads():
    check_attention(padding_reads_real_keys, PLAIN, cp=[3], rows="bshd", cases=30, seed=14)


def test_pad_rows_zero_requires_exact_zeros_at_padding():
    check_attention(writes_padding, PLAIN, cp=[3], rows="bshd", cases=20, seed=7)
    with pytest.raises(cplab.Error, match="not zero at padding") as caught:
        check_attention(writes_padding, PLAIN, cp=[3], rows="bshd", pad_rows="zero", cases=100,
                        seed=7)
    assert caught.value.kind == "check_failed"


def test_backward_false_checks_the_forward_of_an_attention_without_autograd():
    check_attention(forward_only_rounded, PLAIN, cp=[1, 3], backward=False, cases=20, seed=13)
    with pytest.raises(cplab.Error, match="does not require grad") as caught:
        check_attention(forward_only_rounded, PLAIN, cp=[1, 3], cases=20, seed=13)
    assert "backward=False" not in caught.value.replay
    with pytest.raises(cplab.Error) as caught:
        check_attention(writes_padding, PLAIN, cp=[3], rows="bshd", pad_rows="zero",
                        backward=False, cases=100, seed=7)
    assert "backward=False, pad_rows='zero')" in caught.value.replay


def test_a_failure_replays_to_the_same_error():
    with pytest.raises(cplab.Error) as caught:
        check_attention(dkv_not_summed, PLAIN, cp=[2, 3], cases=50, seed=8)
    with pytest.raises(cplab.Error) as again:
        replay_attention(dkv_not_summed, caught.value.case)
    assert str(again.value).split(" · ")[0] in str(caught.value)
    assert caught.value.replay in str(again.value)


# ---- a rank that hangs ----

def test_a_hang_ends_within_the_bound_naming_the_rank():
    started = time.monotonic()
    with pytest.raises(cplab.Error, match=r"rank 1 hangs in fn at test_check_attention.py:\d+ in "
                                          r"hangs_on_last_rank \(ranks \[0\] wait for it in a "
                                          r"collective\): no reply within rank_timeout=3 s") as caught:
        check_attention(hangs_on_last_rank, PLAIN, cp=[2], cases=5, seed=10, rank_timeout=3)
    assert caught.value.kind == "check_failed" and caught.value.rank == 1
    assert time.monotonic() - started < 3 + 60  # the bound, and starting the ranks


def test_a_hang_is_told_from_a_rank_waiting_for_it_in_a_p2p_request():
    with pytest.raises(cplab.Error, match=r"rank 1 hangs in fn at test_check_attention.py:\d+ in "
                                          r"hangs_before_the_ring \(ranks \[0\] wait for it"):
        check_attention(hangs_before_the_ring, PLAIN, cp=[2], cases=5, seed=10, rank_timeout=3)


def test_a_rank_that_skips_a_collective_is_named():
    with pytest.raises(cplab.Error, match=r"rank 1 waits in a collective at allgather_attention.py:"
                                          r"\d+ in _all_gather that ranks \[0\], which "
                                          r"returned, never joined"):
        check_attention(skips_a_collective_on_rank_zero, PLAIN, cp=[2], cases=5, seed=10,
                        rank_timeout=3)
