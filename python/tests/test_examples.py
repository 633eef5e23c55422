"""The example sharders, written as users write them, pass hundreds of cplab's cases; each with
one planted bug of a kind cplab's mutants model fails with a small shrunk counterexample."""
import pytest

import cplab
from contiguous_sharder import cp_cross_entropy, shard_contiguous
from round_robin import shard_head_tail
from thd_sharder import shard_thd

CASES = 500
SEED = 20240601


def test_round_robin_passes():
    summary = cplab.testing.check_sharder(shard_head_tail, "head-tail", rows="bshd", pad_id=0,
                                          cases=CASES, seed=SEED)
    assert summary.cases == CASES


def test_thd_passes():
    summary = cplab.testing.check_sharder(shard_thd, "thd", pad_id=0, cases=CASES, seed=SEED)
    assert summary.cases == CASES


def test_contiguous_passes():
    summary = cplab.testing.check_sharder(shard_contiguous, "contiguous", pad_multiple=2,
                                          pad_id=0, cases=CASES, seed=SEED)
    assert summary.cases == CASES


def test_contiguous_loss_passes():
    summary = cplab.testing.check_loss(cp_cross_entropy, "contiguous", pad_multiple=2,
                                       cases=CASES // 2, seed=SEED)
    assert summary.cases == CASES // 2


def _shrunk(caught):
    error = caught.value
    assert error.kind == "check_failed"
    assert "\n" not in str(error)
    assert "cplab.testing.replay" in str(error)
    return error


def test_tail_chunk_mirrored_wrong_is_caught_small():
    def mirrored(batch, cp_rank, cp_size):  # the tail chunk 2C - r instead of 2C - 1 - r
        return shard_head_tail(batch, cp_rank, cp_size,
                               tail_chunk=lambda r, c: (2 * c - r) % (2 * c))

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_sharder(mirrored, "head-tail", rows="bshd", pad_id=0, cases=CASES,
                                    seed=SEED)
    error = _shrunk(caught)
    assert error.batch["input_ids"].shape[1] <= 8  # S of the shrunk row
    assert error.key in ("input_ids", "labels", "position_ids", "valid")
    with pytest.raises(cplab.Error) as again:  # the replay line fails the same way
        cplab.testing.replay(mirrored, error.case, pad_id=0)
    assert str(again.value).split(" · ")[0] in str(error)


def test_positions_after_partitioning_are_caught_small():
    def local_positions(batch, cp_rank, cp_size):
        return shard_thd(batch, cp_rank, cp_size, positions_after_cut=True)

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_sharder(local_positions, "thd", pad_id=0, cases=CASES, seed=SEED)
    error = _shrunk(caught)
    assert error.key == "position_ids"
    assert error.documents <= 2


def test_pads_counted_in_the_loss_normaliser_are_caught_small():
    def pads_counted(logits, labels, cp_rank, cp_size, group):
        return cp_cross_entropy(logits, labels, cp_rank, cp_size, group, count_pads=True)

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_loss(pads_counted, "contiguous", pad_multiple=2, cases=CASES,
                                 seed=SEED)
    error = _shrunk(caught)
    assert "loss" in str(error)
    assert error.documents <= 2


def test_the_fixture_runs_a_check(cplab_cases):
    summary = cplab_cases.check_sharder(shard_contiguous, "contiguous", pad_id=0, cases=20)
    assert summary.cases == 20
