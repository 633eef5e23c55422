"""A pytest plugin: the ``cplab_cases`` fixture, and ``--cplab-cases`` / ``--cplab-seed`` to size
and reproduce every check a test runs through it.

Enable it with ``pytest -p cplab.pytest_plugin``, or in a conftest.py::

    pytest_plugins = ["cplab.pytest_plugin"]

then::

    def test_my_sharder(cplab_cases):
        cplab_cases.check_sharder(my_sharder, LAYOUT, cp=[1, 2, 4])  # a name of cplab.layouts()

    def test_my_attention(cplab_cases):   # my_attention defined at module level
        cplab_cases.check_attention(my_attention, LAYOUT, cp=[1, 2, 3, 4])
"""
import pytest

from . import testing


class CplabCases:
    """cplab.testing's checks with the session's --cplab-cases and --cplab-seed as defaults."""

    def __init__(self, cases, seed):
        self.cases, self.seed = cases, seed

    def _defaults(self, kwargs):
        kwargs.setdefault("cases", self.cases)
        kwargs.setdefault("seed", self.seed)
        return kwargs

    def check_sharder(self, fn, layout, **kwargs):
        return testing.check_sharder(fn, layout, **self._defaults(kwargs))

    def check_loss(self, fn, layout, **kwargs):
        return testing.check_loss(fn, layout, **self._defaults(kwargs))

    def check_attention(self, fn, layout, **kwargs):
        return testing.check_attention(fn, layout, **self._defaults(kwargs))

    def check_logprobs(self, fn, layout, **kwargs):
        return testing.check_logprobs(fn, layout, **self._defaults(kwargs))

    replay = staticmethod(testing.replay)
    replay_loss = staticmethod(testing.replay_loss)
    replay_attention = staticmethod(testing.replay_attention)
    replay_logprobs = staticmethod(testing.replay_logprobs)


def pytest_addoption(parser):
    group = parser.getgroup("cplab")
    group.addoption("--cplab-cases", type=int, default=100,
                    help="cases per cplab_cases check (default 100)")
    group.addoption("--cplab-seed", type=int, default=None,
                    help="seed of every cplab_cases check (default: a fresh one, printed on "
                         "failure)")


@pytest.fixture
def cplab_cases(request):
    """Runs cplab.testing.check_sharder / check_loss / check_attention with the session's case
    count and seed."""
    config = request.config
    return CplabCases(config.getoption("--cplab-cases"), config.getoption("--cplab-seed"))
