"""contiguous: its registry entry and plan, and the example contiguous sharder and CP loss
(python/examples/layouts/contiguous.py), each with one planted bug."""
import pytest

import cplab
from contiguous import cp_cross_entropy, shard_contiguous
from example_checks import CASES, SEED, shrunk


def test_layouts_name_every_layout_with_its_rows_and_options():
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert layouts["contiguous"]["options"] == ["pad_multiple"]


def test_results_are_torch_tensors_the_caller_owns():
    p = cplab.plan("contiguous", 2, seq_len=6)
    index = p["index"]
    index += 1  # writable, and nobody else's: a second plan is unchanged
    assert cplab.plan("contiguous", 2, seq_len=6)["index"].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_contiguous_passes():
    summary = cplab.testing.check_sharder(shard_contiguous, "contiguous", pad_multiple=2,
                                          pad_id=0, cases=CASES, seed=SEED)
    assert summary.cases == CASES


def test_contiguous_loss_passes():
    summary = cplab.testing.check_loss(cp_cross_entropy, "contiguous", pad_multiple=2,
                                       cases=CASES // 2, seed=SEED)
    assert summary.cases == CASES // 2


def test_pads_counted_in_the_loss_normaliser_are_caught_small():
    def pads_counted(logits, labels, cp_rank, cp_size, group):
        return cp_cross_entropy(logits, labels, cp_rank, cp_size, group, count_pads=True)

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_loss(pads_counted, "contiguous", pad_multiple=2, cases=CASES,
                                 seed=SEED)
    error = shrunk(caught)
    assert "loss" in str(error)
    assert error.documents <= 2


def test_the_fixture_runs_a_check(cplab_cases):
    summary = cplab_cases.check_sharder(shard_contiguous, "contiguous", pad_id=0, cases=20)
    assert summary.cases == 20
