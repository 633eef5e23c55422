"""The Ulysses attention example (python/examples/attention/ulysses_attention.py) through
check_attention with algo="ulysses": it holds on every layout that runs Ulysses, with GQA and MQA
below C, and each bug planted in it is caught with a shrunk case."""
import pytest
import torch

import layout_kinds
from cplab.testing import check_attention
from planted import CASES, expect_caught
from ulysses_attention import ulysses_attention


@pytest.mark.parametrize("layout", layout_kinds.layouts_running("ulysses"))
def test_holds_on_every_layout_that_runs_ulysses(layout):
    summary = check_attention(ulysses_attention, layout, algo="ulysses", cp=[1, 2, 3, 4],
                              cases=CASES, seed=1)
    assert summary.cases == CASES


def test_holds_with_fewer_kv_heads_than_ranks_in_bf16():
    check_attention(ulysses_attention, layout_kinds.a_zigzag_layout(), algo="ulysses", cp=[4],
                    heads=8, kv_heads=2, dtype=torch.bfloat16, cases=CASES, seed=2)


@pytest.mark.parametrize("bug, layout_of, tensors, options", [
    ("output_transposed", layout_kinds.a_plain_layout, ("out",), {}),
    ("rank_order", layout_kinds.a_zigzag_layout, ("out",), {}),
    ("drop_remainder", layout_kinds.a_contiguous_layout, ("out",), {"rows": "bshd"}),
])
def test_planted_bug_is_caught(bug, layout_of, tensors, options):
    expect_caught(ulysses_attention, bug, layout_of(), tensors, algo="ulysses", **options)
