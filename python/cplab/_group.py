"""The CP group a user's loss talks through in cplab.testing.check_loss: every rank runs in its own
thread, and all_reduce sums a tensor over the ranks, as torch.distributed.all_reduce does over a
CP group. A rank that fails, or returns without reaching a collective another rank waits in (it
skipped an all_reduce, or another rank called one more), breaks the group at once; a rank that
neither arrives nor returns breaks it after the wait bound. The others never wait forever.
"""
import threading

import torch

# How long a rank waits in one collective for a rank that is still running before the group is
# broken (check_loss's rank_timeout).
WAIT_SECONDS = 10.0


class GroupBroken(Exception):
    """Raised in the ranks still waiting when another rank failed or never arrived."""


class Group:
    def __init__(self, size, wait_seconds=WAIT_SECONDS):
        self.size = size
        self._barrier = threading.Barrier(size, timeout=wait_seconds)
        self._slots = [None] * size
        self._calls = [0] * size
        self._returned = [None] * size  # a rank's count of calls when its fn returned
        self._lock = threading.Lock()

    def rank(self, rank):
        return RankGroup(self, rank)

    def abort(self):
        self._barrier.abort()

    def returned(self, rank):
        """Rank `rank`'s fn has returned: a rank waiting in a collective it never reached can
        stop waiting now."""
        with self._lock:
            self._returned[rank] = self._calls[rank]
            if any(calls > self._calls[rank] for calls in self._calls):
                self._barrier.abort()

    def _stranded(self, rank):
        """The ranks whose fn returned before reaching this rank's latest collective."""
        return [r for r, calls in enumerate(self._returned)
                if calls is not None and calls < self._calls[rank]]

    def _wait(self, rank):
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            behind = [r for r in range(self.size) if self._calls[r] < self._calls[rank]]
            gone = [r for r in behind if self._returned[r] is not None]
            raise GroupBroken(
                f"rank {rank} waited in all_reduce #{self._calls[rank]}, which "
                + (f"ranks {gone} returned without reaching" if gone
                   else f"ranks {behind} never reached" if behind
                   else "another rank left by failing")
            ) from None

    def _all_reduce(self, rank, tensor):
        with self._lock:
            self._calls[rank] += 1
            if self._stranded(rank):
                self._barrier.abort()
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
