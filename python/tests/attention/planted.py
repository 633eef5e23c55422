"""What the example attentions' tests share: how many cases a passing check runs (CI's default,
raised with CPLAB_ATTENTION_CASES for a long run), and a planted bug's check, which must fail with
a shrunk case naming one of the tensors the bug breaks."""
import functools
import os
import time

import pytest

import cplab
from cplab.testing import check_attention

CASES = int(os.environ.get("CPLAB_ATTENTION_CASES", "30"))
# How many cases a planted bug gets to be found in (each is found in far fewer).
HUNT = 300


def expect_caught(fn, bug, layout, tensors, **options):
    """check_attention of fn(bug=bug) fails, shrunk, on one of `tensors`; prints the case."""
    planted = functools.partial(fn, bug=bug)
    options.setdefault("cp", [2, 3, 4])
    started = time.monotonic()
    with pytest.raises(cplab.Error) as caught:
        check_attention(planted, layout, cases=HUNT, seed=11, **options)
    error = caught.value
    assert error.kind == "check_failed", str(error)
    assert error.tensor in tensors, str(error)
    assert "replay: cplab.testing.replay_attention(" in str(error)
    print(f"\n{bug}: caught in {time.monotonic() - started:.1f} s: {error}")
    return error
