"""cplab on live torch tensors: the reference of every context-parallel layout, the shard checker
of ``cplab check`` and, in ``cplab.testing``, property-based checks of your own sharder and CP loss
on cplab's random packed and BSHD batches.

    >>> import cplab
    >>> names = [l["name"] for l in cplab.layouts()]    # every registered layout
    >>> p = cplab.plan(names[0], 2, seq_len=8)          # index maps, positions, ... as tensors
    >>> shards = cplab.shard(batch, names[0], 2)        # what every rank must hold
    >>> cplab.check_shards(batch, my_shards, 2).ok      # the same engine as `cplab check`
    >>> ref = cplab.attention(q, k, v, g, layout=names[0], cp=2, seq_len=8, mask="window:4")

Every failure is a ``cplab.Error`` with the CLI's one-line message and a ``kind``.
"""
import functools

import torch  # noqa: F401  (tensors cross through torch.utils.dlpack; the extension links no torch)

from . import _cplab
from ._cplab import CheckResult, Difference
from ._error import Error


def _typed(binding):
    """The binding, with pybind11's multi-line TypeError for arguments of the wrong type turned
    into a one-line cplab.Error (kind "bad_input") like every other bad input."""

    @functools.wraps(binding)
    def call(*args, **kwargs):
        try:
            return binding(*args, **kwargs)
        except TypeError as error:
            text = str(error)
            if "incompatible function arguments" not in text:
                raise
            invoked = text.split("Invoked with:", 1)[-1].strip()
            signature = binding.__doc__.split("\n", 1)[0]
            raise Error(" ".join(f"{binding.__name__}(): arguments of the wrong type "
                                 f"({invoked}); it takes {signature}".split())) from None

    return call


layouts = _typed(_cplab.layouts)
plan = _typed(_cplab.plan)
shard = _typed(_cplab.shard)
gather = _typed(_cplab.gather)
shift = _typed(_cplab.shift)
shifted_loss = _typed(_cplab.shifted_loss)
check_shards = _typed(_cplab.check_shards)
attention = _typed(_cplab.attention)
mask_matrix = _typed(_cplab.mask_matrix)

__all__ = [
    "CheckResult",
    "Difference",
    "Error",
    "attention",
    "check_shards",
    "gather",
    "layouts",
    "mask_matrix",
    "plan",
    "shard",
    "shift",
    "shifted_loss",
    "testing",
]


from . import testing  # noqa: E402  (starts no process until a check is called)
