"""The zigzag ring attention example (python/examples/attention/ring_attention.py) through
check_attention: it holds on every layout that runs a ring, in every dtype, format and mask it
runs, and each bug planted in it is caught with a shrunk case."""
import pytest
import torch

import layout_kinds
from cplab.testing import check_attention
from planted import CASES, expect_caught
from ring_attention import ring_attention


@pytest.mark.parametrize("layout", layout_kinds.layouts_running("ring"))
def test_holds_on_every_layout_that_runs_a_ring(layout):
    summary = check_attention(ring_attention, layout, cp=[1, 2, 3, 4], cases=CASES, seed=1)
    assert summary.cases == CASES


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_holds_in_half_precision(dtype):
    check_attention(ring_attention, layout_kinds.a_zigzag_layout(), cp=[2, 3, 5], dtype=dtype,
                    cases=CASES, seed=2)


@pytest.mark.parametrize("mask", ["window", "chunked", "bidirectional"])
def test_holds_under_every_mask(mask):
    check_attention(ring_attention, layout_kinds.a_zigzag_layout(), cp=[2, 3], mask=mask,
                    cases=CASES, seed=3)


def test_holds_on_packed_rows_in_thd_format():
    check_attention(ring_attention, layout_kinds.a_zigzag_layout(), cp=[2, 4], qkv_format="thd",
                    cases=CASES, seed=4)


@pytest.mark.parametrize("bug, layout_of, tensors", [
    ("stale_kv_backward", layout_kinds.a_plain_layout, ("dq", "dk", "dv")),
    # Its 0/0 on a rank's padding rows (lse -inf) reaches the real keys' dK through the backward.
    ("merge_without_max", layout_kinds.a_plain_layout, ("out", "lse", "dq", "dk", "dv")),
    ("wrong_zigzag_half", layout_kinds.a_zigzag_layout, ("out", "lse")),
    ("ignores_grad_out", layout_kinds.a_plain_layout, ("dq", "dk", "dv")),
])
def test_planted_bug_is_caught(bug, layout_of, tensors):
    expect_caught(ring_attention, bug, layout_of(), tensors)
