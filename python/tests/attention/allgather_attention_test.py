"""The all-gather-KV attention example (python/examples/attention/allgather_attention.py) through
check_attention: it holds on every layout that runs all-gather (the varlen segments path where the
layout has them), and each bug planted in it is caught with a shrunk case."""
import pytest
import torch

import layout_kinds
from allgather_attention import allgather_attention
from cplab.testing import check_attention
from planted import CASES, expect_caught


@pytest.mark.parametrize("layout", layout_kinds.layouts_running("all-gather"))
def test_holds_on_every_layout_that_runs_all_gather(layout):
    summary = check_attention(allgather_attention, layout, cp=[1, 2, 3, 4], cases=CASES, seed=1)
    assert summary.cases == CASES


def test_holds_through_varlen_segments_in_bf16_with_gqa():
    check_attention(allgather_attention, layout_kinds.a_varlen_segments_layout(), cp=[2, 3, 6],
                    dtype=torch.bfloat16, heads=4, kv_heads=1, cases=CASES, seed=2)


def test_holds_under_a_window_through_varlen_segments():
    check_attention(allgather_attention, layout_kinds.a_varlen_segments_layout(), cp=[2, 4],
                    mask="window", qkv_format="thd", cases=CASES, seed=3)


@pytest.mark.parametrize("bug, layout_of, tensors", [
    ("cp_off", layout_kinds.a_plain_layout, ("out", "lse")),
    ("wrong_gather_dim", layout_kinds.a_plain_layout, ("out", "lse")),
    ("dkv_not_summed", layout_kinds.a_plain_layout, ("dk", "dv")),
    ("top_left_diagonal", layout_kinds.a_varlen_segments_layout, ("out", "lse")),
])
def test_planted_bug_is_caught(bug, layout_of, tensors):
    expect_caught(allgather_attention, bug, layout_of(), tensors)
