"""Every malformed input is one cplab.Error line with a kind, never a crash, a SystemError or a
TypeError from the binding layer."""
import threading

import pytest
import torch

import cplab
from allgather_attention import allgather_attention
from cplab.testing import check_attention, replay_attention
from layout_kinds import (a_layout_with_an_example, a_layout_with_option, a_packed_only_layout,
                          a_plain_layout, example_sharder)

# Generic plumbing: any layout that takes every row and needs no option, and for the sharder
# tests a layout with a sharder known to be right (its example) taking BSHD rows.
PLAIN = a_plain_layout()
SHARDED = a_layout_with_an_example("bshd")
shard_example = example_sharder(SHARDED)


def _batch():
    ids = torch.arange(8).reshape(1, 8)
    return {"input_ids": ids, "labels": ids.clone()}


def _error(call, kind="bad_input"):
    with pytest.raises(cplab.Error) as caught:
        call()
    error = caught.value
    assert error.kind == kind, str(error)
    assert str(error) and "\n" not in str(error)
    assert error.cli_line.startswith("cplab: ")
    return str(error)


def test_wrong_dtype():
    batch = _batch()
    batch["labels"] = batch["labels"].double()
    assert "batch['labels'] has dtype torch.float64" in _error(lambda: cplab.shard(batch, PLAIN, 2))
    shards = cplab.shard(_batch(), PLAIN, 2)
    shards[0]["input_ids"] = shards[0]["input_ids"].to(torch.complex64)
    assert "shards[0]['input_ids'] has dtype torch.complex64" in _error(
        lambda: cplab.check_shards(_batch(), shards, 2))


def test_a_tensor_on_another_device():
    batch = _batch()
    batch["input_ids"] = torch.empty(1, 8, dtype=torch.long, device="meta")
    assert "meta" in _error(lambda: cplab.shard(batch, PLAIN, 2))


def test_a_sparse_tensor():
    batch = _batch()
    batch["labels"] = batch["labels"].to_sparse()
    _error(lambda: cplab.shard(batch, PLAIN, 2))


def test_a_non_contiguous_tensor_is_read_through_its_strides():
    wide = torch.arange(16).reshape(2, 8)
    view = wide[:, ::2].t().contiguous().t()  # strides (1, 2): not contiguous
    assert not view.is_contiguous()
    batch = {"input_ids": view, "labels": view}
    got = cplab.shard(batch, PLAIN, 2)
    want = cplab.shard({"input_ids": view.contiguous(), "labels": view.contiguous()},
                       PLAIN, 2)
    assert all(torch.equal(g["input_ids"], w["input_ids"]) for g, w in zip(got, want))


@pytest.mark.parametrize("batch", [None, "batch", [1, 2], {"input_ids": [1, 2]}, {3: torch.ones(2)}])
def test_a_batch_that_is_not_a_dict_of_tensors(batch):
    _error(lambda: cplab.shard(batch, PLAIN, 2))


def test_bad_layout_and_options():
    assert "known layouts" in _error(lambda: cplab.plan("zigzag", 2, seq_len=8))
    _error(lambda: cplab.plan(PLAIN, 0, seq_len=8))
    _error(lambda: cplab.plan(PLAIN, 2))
    _error(lambda: cplab.plan(a_layout_with_option("pad_multiple"), 2, seq_len=8, pad_multiple=0))
    _error(lambda: cplab.plan(PLAIN, 2, seq_len=8, pad_policy="sometimes"))
    _error(lambda: cplab.plan(PLAIN, 2, seq_len=-3))


def test_wrong_argument_types_are_cplab_errors():
    _error(lambda: cplab.plan(PLAIN, "two", seq_len=8))
    _error(lambda: cplab.gather("not a list", PLAIN, 2, seq_len=8))


def test_shard_count_and_shard_dicts():
    shards = cplab.shard(_batch(), PLAIN, 2)
    assert "3 shards for cp=2" in _error(lambda: cplab.check_shards(_batch(), shards + shards[:1], 2))
    _error(lambda: cplab.check_shards(_batch(), shards[0], 2))
    _error(lambda: cplab.check_shards(_batch(), [shards[0], "rank1.pt"], 2))


def test_a_shard_dict_missing_a_key_fails_the_check():
    def drops_labels(batch, cp_rank, cp_size):
        shard = shard_example(batch, cp_rank, cp_size)
        shard.pop("labels")
        return shard

    message = _error(lambda: cplab.testing.check_sharder(drops_labels, SHARDED, rows="bshd",
                                                         cases=20, seed=1), kind="check_failed")
    assert "labels: missing" in message


def test_a_sharder_that_raises_is_a_shrunk_failure_with_its_cause():
    def raises(batch, cp_rank, cp_size):
        if cp_size > 1:
            raise ValueError("no CP here")
        return shard_example(batch, cp_rank, cp_size)

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_sharder(raises, SHARDED, rows="bshd", cases=20, seed=1)
    assert caught.value.kind == "check_failed"
    assert "fn raised ValueError: no CP here" in str(caught.value)
    assert isinstance(caught.value.__cause__, ValueError)
    assert " cp=2 " in str(caught.value)  # shrunk to the smallest C that fails


@pytest.mark.parametrize("returned", [None, 7, "shard"])
def test_a_sharder_returning_no_dict(returned):
    message = _error(lambda: cplab.testing.check_sharder(lambda b, r, c: returned, SHARDED,
                                                         cases=5, seed=1))
    assert "not a dict" in message


def test_a_sharder_returning_every_rank_at_once():
    def all_ranks(batch, cp_rank, cp_size):
        return [shard_example(batch, r, cp_size) for r in range(cp_size)]

    assert "returned a list of" in _error(lambda: cplab.testing.check_sharder(
        all_ranks, SHARDED, rows="bshd", cases=5, seed=1))


def test_a_sharder_returning_other_values():
    def numbers(batch, cp_rank, cp_size):
        return {"input_ids": [1, 2, 3], "labels": 4}

    # Entries that are not tensors are ignored, as `cplab check` ignores them: keys are missing.
    _error(lambda: cplab.testing.check_sharder(numbers, SHARDED, cases=5, seed=1),
           kind="check_failed")


def test_testing_arguments():
    _error(lambda: cplab.testing.check_sharder(shard_example, "zigzag"))
    _error(lambda: cplab.testing.check_sharder(shard_example, SHARDED, cp=0))
    _error(lambda: cplab.testing.check_sharder(shard_example, SHARDED, cases=0))
    _error(lambda: cplab.testing.check_sharder(shard_example, SHARDED, seed=-1))
    _error(lambda: cplab.testing.check_sharder(shard_example, SHARDED, rows="ragged"))
    _error(lambda: cplab.testing.check_sharder("shard_example", SHARDED, cases=1))
    _error(lambda: cplab.testing.check_sharder(shard_example, a_packed_only_layout(), rows="bshd"))
    _error(lambda: cplab.testing.replay(shard_example, f"{SHARDED} cp=two"))
    # Not a list of ints: one cplab.Error, not the TypeError of list(2.0) or list(None).
    for cp in (2.0, None, "2", [2, 2.5]):
        assert "cp must be an int or a list of ints" in _error(
            lambda: cplab.testing.check_sharder(shard_example, SHARDED, cp=cp, cases=1))


@pytest.mark.parametrize("cp", [4, [4], [6], [4, 6]])
def test_every_cp_the_caller_names_is_drawn(cp):
    """C = 4 and 6 belong to none of the sweep's declared C classes (1, 2, odd primes, 8 and up);
    they were once refused for every layout ("draws no BSHD rows")."""
    sizes = set()

    def recording(batch, cp_rank, cp_size):
        sizes.add(cp_size)
        return shard_example(batch, cp_rank, cp_size)

    summary = cplab.testing.check_sharder(recording, SHARDED, cp=cp, cases=20, seed=3)
    assert summary.cases == 20
    assert sizes and sizes <= set(cp if isinstance(cp, list) else [cp]), sizes


def test_a_loss_that_raises_or_returns_nonsense():
    def raises(logits, labels, cp_rank, cp_size):
        raise RuntimeError("boom")

    assert "fn raised RuntimeError: boom" in _error(
        lambda: cplab.testing.check_loss(raises, PLAIN, cases=5, seed=1),
        kind="check_failed")
    assert "returns (loss, grad)" in _error(lambda: cplab.testing.check_loss(
        lambda logits, labels, r, c: "loss", PLAIN, cases=5, seed=1))


def test_a_loss_rank_that_never_joins_the_all_reduce_breaks_the_group():
    def rank0_skips(logits, labels, cp_rank, cp_size, group):
        if cp_rank == 0:
            raise RuntimeError("rank 0 left")
        group.all_reduce(torch.ones(1))
        return torch.zeros(()), torch.zeros_like(logits)

    message = _error(lambda: cplab.testing.check_loss(rank0_skips, PLAIN, cp=2, cases=5,
                                                      seed=1), kind="check_failed")
    assert "rank 0 left" in message


def _joins_then_returns(logits, group):
    group.all_reduce(torch.ones(1))
    return torch.zeros(()), torch.zeros_like(logits)


def test_a_loss_rank_that_skips_or_adds_an_all_reduce_fails_at_once_naming_it():
    """A rank that returns without reaching the all_reduce the others wait in (or calls one more
    than they do) breaks the group as it returns: once every case waited 60 s for it, and the
    shrinking ran for minutes. Only the immediate path says "returned without reaching"."""
    def rank0_skips(logits, labels, cp_rank, cp_size, group):
        if cp_rank == 0:
            return torch.zeros(()), torch.zeros_like(logits)
        return _joins_then_returns(logits, group)

    def rank0_twice(logits, labels, cp_rank, cp_size, group):
        if cp_rank == 0:
            group.all_reduce(torch.ones(1))
        return _joins_then_returns(logits, group)

    for fn in (rank0_skips, rank0_twice):
        message = _error(lambda: cplab.testing.check_loss(fn, PLAIN, cp=2, cases=5, seed=1,
                                                          rank_timeout=120), kind="check_failed")
        assert "returned without reaching" in message, message
        assert "ranks [0]" in message or "ranks [1]" in message, message


def test_a_loss_rank_that_hangs_ends_the_check_within_the_bound_naming_it():
    never = threading.Event()  # never set: rank 1 hangs in fn

    def rank1_hangs(logits, labels, cp_rank, cp_size, group):
        if cp_rank == 1:
            never.wait()
        return _joins_then_returns(logits, group)

    message = _error(lambda: cplab.testing.check_loss(rank1_hangs, PLAIN, cp=2, cases=5, seed=1,
                                                      rank_timeout=0.5), kind="check_failed")
    assert "rank 1 neither returned nor reached the other ranks within rank_timeout=0.5 s" \
        in message, message
    assert "not shrunk" in message
    for bad in (0, -1, "10", None, True, 1e9, float("nan"), float("inf")):
        _error(lambda: cplab.testing.check_loss(rank1_hangs, PLAIN, cp=2, rank_timeout=bad))


# ---- check_attention: a user attention that misbehaves, and every bad keyword ----

def raises_on_rank_one(q, k, v, meta):
    if meta.cp_rank == 1:
        raise RuntimeError("rank one gave up")
    return allgather_attention(q, k, v, meta)


def returns_nan(q, k, v, meta):
    out, lse = allgather_attention(q, k, v, meta)
    return out * float("nan"), lse


def returns_a_view_of_q(q, k, v, meta):
    allgather_attention(q, k, v, meta)
    return q[:]


def mutates_k(q, k, v, meta):
    result = allgather_attention(q, k, v, meta)
    k.data.mul_(2)
    return result


def returns_on_rank_zero_only(q, k, v, meta):
    result = allgather_attention(q, k, v, meta)
    return result if meta.cp_rank == 0 else None


def computes_without_autograd(q, k, v, meta):
    with torch.no_grad():
        return allgather_attention(q, k, v, meta)


class _FailingBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("no backward here")


def raises_in_backward(q, k, v, meta):
    return allgather_attention(_FailingBackward.apply(q), k, v, meta)


def lse_of_the_wrong_shape(q, k, v, meta):
    out, lse = allgather_attention(q, k, v, meta)
    return out, lse.transpose(1, 2)


def wrong_dtype(q, k, v, meta):
    out, lse = allgather_attention(q, k, v, meta)
    return out.double(), lse


@pytest.mark.parametrize("fn, says", [
    (raises_on_rank_one, "fn raised in forward on rank 1: RuntimeError: rank one gave up"),
    (returns_nan, "out is wrong even unsharded (C = 1): error not finite"),
    (returns_a_view_of_q, "shares its storage with q"),
    (mutates_k, "changed its input k in place"),
    (returns_on_rank_zero_only, "returned NoneType"),
    (wrong_dtype, "out is torch.float64"),
    (computes_without_autograd, "out does not require grad"),
    (raises_in_backward, "fn raised in backward on rank 0: ValueError: no backward here"),
    (lse_of_the_wrong_shape, "lse is torch.float32"),
])
def test_a_misbehaving_attention_fails_in_one_line(fn, says):
    with pytest.raises(cplab.Error) as caught:
        check_attention(fn, PLAIN, cp=[2], cases=50, seed=9)
    message = str(caught.value)
    assert caught.value.kind == "check_failed" and "\n" not in message
    assert says in message, message


def test_a_lambda_is_bad_input_that_says_where_to_define_fn():
    with pytest.raises(cplab.Error, match="define it at module level") as caught:
        check_attention(lambda q, k, v, meta: q, PLAIN)
    assert caught.value.kind == "bad_input"


@pytest.mark.parametrize("keywords, says", [
    ({"dtype": torch.int32}, "dtype must be"),
    ({"pad_rows": "keep"}, "pad_rows must be"),
    ({"qkv_format": "sbhd"}, "qkv_format must be"),
    ({"heads": 0}, "heads must be an int"),
    ({"heads": 4, "kv_heads": 3}, "must divide heads"),
    ({"head_dim": 1000}, "head_dim must be"),
    ({"mask": "window:0"}, "window"),
    ({"mask": 3}, "mask must be"),
    ({"algo": "spiral"}, "spiral"),
    ({"rank_timeout": 0}, "rank_timeout"),
    ({"cp": 0}, "cp values must be at least 1"),
    ({"backward": "yes"}, "backward must be"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"no_such_option": 1}, "unexpected keyword argument"),
])
def test_every_bad_keyword_is_one_line(keywords, says):
    with pytest.raises(cplab.Error) as caught:
        check_attention(allgather_attention, PLAIN, cases=1, **keywords)
    assert caught.value.kind == "bad_input" and says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_an_algorithm_the_layout_refuses_is_bad_input():
    refusing = [e["name"] for e in cplab.layouts() if "ring" not in e["algos"]]
    if not refusing:
        pytest.skip("every layout runs a ring")
    with pytest.raises(cplab.Error, match="refuses ring"):
        check_attention(allgather_attention, refusing[0], algo="ring", cases=1)




@pytest.mark.parametrize("suffix, says", [
    ("", "an attention case is"),
    (" | heads=2", "an attention case ends"),
    (" | heads=x kv_heads=1 head_dim=1 scale=1e0", "an attention case ends"),
    (" | heads=0 kv_heads=1 head_dim=1 scale=1e0", "out of range"),
    (" | heads=257 kv_heads=1 head_dim=1 scale=1e0", "out of range"),
    (" | heads=4 kv_heads=3 head_dim=1 scale=1e0", "out of range"),
    (" | heads=1 kv_heads=1 head_dim=513 scale=1e0", "out of range"),
    (" | heads=1 kv_heads=1 head_dim=1 scale=1e7", "out of range"),
    (" | heads=1 kv_heads=1 head_dim=1 scale=1enan", "an attention case ends"),
    (" | heads=99999999999999999999999 kv_heads=1 head_dim=1 scale=1e0", "out of range"),
])
def test_a_malformed_attention_case_line_is_one_line(suffix, says):
    line = f"{PLAIN} cp=2 rows=1 S=4 seed=1" + suffix
    assert says in _error(lambda: replay_attention(allgather_attention, line))


def test_a_truncated_attention_case_line_is_one_line():
    _error(lambda: replay_attention(allgather_attention, f"{PLAIN} cp=2 ro | heads=1 kv_heads=1 "
                                    "head_dim=1 scale=1e0"))
