"""What the example sharders' tests (layouts/ID_test.py) share: how many cases, the seed, and
what a shrunk counterexample must look like."""
CASES = 500
SEED = 20240601


def shrunk(caught):
    """The cplab.Error a planted bug raised: a check failure on one line naming its replay."""
    error = caught.value
    assert error.kind == "check_failed"
    assert "\n" not in str(error)
    assert "cplab.testing.replay" in str(error)
    return error
