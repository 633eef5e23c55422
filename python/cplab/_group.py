"""The CP group a user's loss talks through in cplab.testing.check_loss: every rank runs in its own
thread, and all_reduce sums a tensor over the ranks, as torch.distributed.all_reduce does over a
CP group. A rank that fails or never arrives breaks the group, so the others never wait forever.
"""
import threading

import torch

# How long a rank waits for the others in one collective before the group is broken.
_WAIT_SECONDS = 60.0


class GroupBroken(Exception):
    """Raised in the ranks still waiting when another rank failed or never arrived."""


class Group:
    def __init__(self, size):
        self.size = size
        self._barrier = threading.Barrier(size, timeout=_WAIT_SECONDS)
        self._slots = [None] * size
        self._calls = [0] * size

    def rank(self, rank):
        return RankGroup(self, rank)

    def abort(self):
        self._barrier.abort()

    def _wait(self, rank):
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            behind = [r for r in range(self.size) if self._calls[r] < self._calls[rank]]
            raise GroupBroken(
                f"rank {rank} waited in all_reduce #{self._calls[rank]}, which "
                + (f"ranks {behind} never reached" if behind else "another rank left by failing")
            ) from None

    def _all_reduce(self, rank, tensor):
        self._calls[rank] += 1
        self._slots[rank] = torch.as_tensor(tensor).detach().clone()
        self._wait(rank)
        total = self._slots[0].clone()
        for other in self._slots[1:]:
            total = total + other
        self._wait(rank)  # nobody overwrites its slot before every rank has read them all
        return total


class RankGroup:
    """What one rank's loss is handed as ``group``: ``all_reduce(t)`` returns the sum of t over
    the ranks (a new tensor); ``rank`` and ``size`` as torch.distributed names them."""

    def __init__(self, group, rank):
        self._group = group
        self.rank = rank
        self.size = group.size

    def all_reduce(self, tensor):
        return self._group._all_reduce(self.rank, tensor)
