"""cplab.testing.check_logprobs on the example RL log-prob pipeline
(python/examples/logprobs/token_logprobs.py): it holds on every layout, and the three bugs such
pipelines shipped with are each caught with a shrunk case."""
import functools
import re

import pytest

import cplab
import layout_kinds
from cplab.testing import check_logprobs
from token_logprobs import token_logprobs


@pytest.mark.parametrize("layout", layout_kinds.layouts_where(lambda e: not e["cp_off"]))
def test_the_pipeline_holds_on_every_layout(layout):
    assert check_logprobs(token_logprobs, layout, cp=[1, 2, 3, 4], cases=30, seed=1).cases == 30


@pytest.mark.parametrize("bug, rows", [
    ("roll_over_row", "packed"),      # verl PR 6564
    ("roll_after_split", "any"),      # verl PR 4250
    ("trim_twice", "any"),            # slime PR 1377
])
def test_a_planted_bug_is_caught_and_shrunk(bug, rows):
    planted = functools.partial(token_logprobs, bug=bug)
    with pytest.raises(cplab.Error) as caught:
        check_logprobs(planted, layout_kinds.a_plain_layout(), cp=[2, 3], rows=rows, cases=300,
                       seed=5)
    error = caught.value
    assert error.kind == "check_failed" and error.key == "logprobs", str(error)
    assert "replay: cplab.testing.replay_logprobs(" in str(error) and "\n" not in str(error)
    assert re.search(r"cases and [1-9]\d* shrinks", str(error)), str(error)  # shrunk
    with pytest.raises(cplab.Error):
        cplab.testing.replay_logprobs(planted, error.case)
    print(f"\n{bug}: {error}")


def returns_every_rank_stacked(logits, labels, meta):
    return token_logprobs(logits, labels, meta)[0].expand(meta.cp_size, -1, -1)


def test_a_pipeline_that_returns_another_shape_is_one_line():
    with pytest.raises(cplab.Error, match="fn returns the gathered per-token logprobs"):
        check_logprobs(returns_every_rank_stacked, layout_kinds.a_plain_layout(), cp=[2], cases=20,
                       seed=2)


def raises_on_rank_one(logits, labels, meta):
    if meta.cp_rank == 1:
        raise KeyError("labels")
    return token_logprobs(logits, labels, meta)


def test_a_pipeline_that_raises_is_a_shrunk_one_line_failure():
    with pytest.raises(cplab.Error, match=r"fn raised on rank 1: KeyError: 'labels'") as caught:
        check_logprobs(raises_on_rank_one, layout_kinds.a_plain_layout(), cp=[2], cases=20,
                       seed=3)
    assert caught.value.kind == "check_failed" and caught.value.rank == 1


@pytest.mark.parametrize("keywords, says", [
    ({"rank_timeout": -1}, "rank_timeout"),
    ({"cp": [0]}, "cp values must be at least 1"),
    ({"rows": "ragged"}, "rows must be"),
])
def test_bad_keywords_are_one_line(keywords, says):
    with pytest.raises(cplab.Error, match=says) as caught:
        check_logprobs(token_logprobs, layout_kinds.a_plain_layout(), cases=1, **keywords)
    assert caught.value.kind == "bad_input"


def entropy_on_rank_zero_only(logits, labels, meta):
    logprobs, entropy = token_logprobs(logits, labels, meta)
    return (logprobs, entropy) if meta.cp_rank == 0 else logprobs


def test_ranks_that_return_different_things_break_the_contract():
    with pytest.raises(cplab.Error, match="some ranks returned"):
        check_logprobs(entropy_on_rank_zero_only, layout_kinds.a_plain_layout(), cp=[2], cases=20,
                       seed=4)
