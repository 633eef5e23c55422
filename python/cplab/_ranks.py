"""Real torch.distributed ranks for cplab.testing.check_attention and check_logprobs: W processes, each a gloo rank on
127.0.0.1, started once per check and handed one case after another over a pipe. They are forked
from multiprocessing's fork server, a clean process that has imported torch once: nothing of the
caller's process state leaks in (no threads, no locks held across a fork), and a rank costs a fork,
not an interpreter and a torch import.

Every case names the process groups it needs (the CP group of its C ranks, and for usp the Ulysses
and ring groups); each process creates the ones it has not created yet, in the order given, so that
``dist.new_group`` is called alike everywhere. Ranks at or past the case's C only take part in that.

A rank that fails (fn raised, returned something it may not) leaves the others waiting in a
collective that never completes: the pool is then torn down and started afresh for the next case,
rather than waiting out gloo's timeout. A rank that neither replies nor fails within the bound is
named and the pool torn down as well; before that, every such rank writes its Python stack
(faulthandler), which tells a rank hung in fn from one waiting in a collective for it.
"""
import datetime
import faulthandler
import functools
import io
import linecache
import multiprocessing
import multiprocessing.connection
import os
import pickle
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback

# How long the other ranks are given to reply once one has failed.
GRACE_SECONDS = 0.2
# How long W fresh processes may take to import torch and meet (2 cores, 8 ranks: about 10 s).
STARTUP_SECONDS = 120.0


class PoolFailed(Exception):
    """The ranks could not be started, or fn could not be loaded in them (a one-line reason)."""


def encode(obj):
    """Tensors and plain values as bytes (torch.save: every dtype, no shared-memory handles)."""
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def decode(data):
    import torch

    return torch.load(io.BytesIO(data))


class Meta:
    """What a rank's attention is handed beside q, k, v (check_attention's docstring lists it)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def __repr__(self):
        names = ", ".join(sorted(self.__dict__))
        return f"<cplab meta of rank {self.cp_rank}/{self.cp_size}: {names}>"


def _storage_ptr(tensor):
    try:
        return tensor.untyped_storage().data_ptr()
    except AttributeError:  # torch < 2
        return tensor.storage().data_ptr()


def _first_frame(error):
    """Where in the user's code an exception came from: 'file.py:12 in fn'."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"


def _run_case(fn, message, groups, rank):
    """One rank's part of one case: fn forward, the contract, backward. Returns a tuple whose first
    item says what happened."""
    import torch

    inputs = message["inputs"]
    q, k, v = (inputs[n].clone().requires_grad_(message["backward"]) for n in ("q", "k", "v"))
    kept = [t.detach().clone() for t in (q, k, v)]
    fields = dict(message["meta"])
    for name, ranks in message["groups_of_rank"].items():
        fields[name] = groups[ranks]
    meta = Meta(**fields)
    started = time.perf_counter()
    try:
        with torch.enable_grad():
            returned = fn(q, k, v, meta)
    except BaseException as error:  # noqa: B036 (reported, the process goes on)
        return ("raised", "forward", f"{type(error).__name__}: {error}{_first_frame(error)}")
    seconds = time.perf_counter() - started
    if isinstance(returned, tuple) and len(returned) == 2:
        out, lse = returned
    else:
        out, lse = returned, None
    problem = _contract(out, lse, q, k, v, kept, message)
    if problem:
        return ("contract", problem)
    grads = [None, None, None]
    if message["backward"]:
        if not out.requires_grad:
            return ("contract", "out does not require grad: it was computed without autograd "
                                "(under no_grad, detached, or from .data); pass backward=False to "
                                "check the forward only")
        started = time.perf_counter()
        try:
            out.backward(inputs["grad_out"].to(out.dtype))
        except BaseException as error:  # noqa: B036
            return ("raised", "backward",
                    f"{type(error).__name__}: {error}{_first_frame(error)}")
        seconds += time.perf_counter() - started
        grads = [None if t.grad is None else t.grad.detach() for t in (q, k, v)]
    return ("done", out.detach(), None if lse is None else lse.detach(), *grads, seconds)


def _run_logprobs(fn, message, groups, rank):
    """One rank's part of a check_logprobs case: fn(logits_shard, labels_shard, meta) returns
    the gathered per-token log-probs [B, S] (and entropy [B, S], when it returns a pair)."""
    import torch

    inputs = message["inputs"]
    fields = dict(message["meta"])
    for name, ranks in message["groups_of_rank"].items():
        fields[name] = groups[ranks]
    started = time.perf_counter()
    try:
        returned = fn(inputs["logits"].clone(), inputs["labels"].clone(), Meta(**fields))
    except BaseException as error:  # noqa: B036 (reported, the process goes on)
        return ("raised", "fn", f"{type(error).__name__}: {error}{_first_frame(error)}")
    seconds = time.perf_counter() - started
    pair = isinstance(returned, tuple) and len(returned) == 2
    logprobs, entropy = returned if pair else (returned, None)
    want = list(message["shape"])
    for name, value in (("logprobs", logprobs), ("entropy", entropy)):
        if value is None and name == "entropy":
            continue
        if not torch.is_tensor(value) or list(value.shape) != want or \
                not value.is_floating_point() or value.device.type != "cpu":
            got = (f"{value.dtype} {list(value.shape)} on {value.device}"
                   if torch.is_tensor(value) else type(value).__name__)
            return ("contract", f"{name} is {got}; fn returns the gathered per-token {name}: a "
                                f"floating CPU tensor {want} (the caller's B, S), or "
                                f"(logprobs, entropy)")
    return ("done", logprobs.detach().double(),
            None if entropy is None else entropy.detach().double(), seconds)


def _contract(out, lse, q, k, v, kept, message):
    import torch

    if not torch.is_tensor(out):
        return (f"fn returned {type(out).__name__}: it returns out, a tensor like q, or "
                f"(out, lse)")
    if out.device.type != "cpu":
        return f"out is on {out.device}; the ranks run on the CPU"
    if tuple(out.shape) != tuple(q.shape) or out.dtype != q.dtype:
        return (f"out is {out.dtype} {list(out.shape)}; it must be like q: {q.dtype} "
                f"{list(q.shape)}")
    if lse is not None:
        want = list(q.shape[:-1])
        if not torch.is_tensor(lse) or list(lse.shape) != want or not lse.is_floating_point():
            got = (f"{lse.dtype} {list(lse.shape)}" if torch.is_tensor(lse)
                   else type(lse).__name__)
            return f"lse is {got}; it must be a floating tensor of q's shape without d: {want}"
    for name, tensor, before in zip("qkv", (q, k, v), kept):
        if _storage_ptr(out) == _storage_ptr(tensor):
            return f"out shares its storage with {name} (a view of an input, not a new tensor)"
        if not torch.equal(tensor.detach(), before):
            return f"fn changed its input {name} in place"
    return ""


def _rank_main(rank, world, store, timeout, fn_bytes, conn):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    stack = open(_stack_file(store, rank), "w")  # noqa: SIM115 (open for the process's life)
    faulthandler.register(signal.SIGUSR1, file=stack, all_threads=True)
    try:
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        fn = pickle.loads(fn_bytes)
        # gloo's own bound is a backstop past the parent's (which names the rank that hangs):
        # were it shorter, a rank waiting for a hung one would fail first and be blamed.
        dist.init_process_group("gloo", init_method="file://" + store, rank=rank,
                                world_size=world,
                                timeout=datetime.timedelta(seconds=2 * timeout + 10))
    except BaseException as error:  # noqa: B036 (sent to the parent as one line)
        conn.send(("startup", f"{type(error).__name__}: {error}"))
        return
    conn.send(("ready",))
    groups = {}
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        message = decode(data)
        if message is None:
            return
        for ranks in message["groups"]:
            if ranks not in groups:
                groups[ranks] = dist.new_group(list(ranks))
        if "inputs" not in message:
            conn.send_bytes(encode(("idle",)))
            continue
        try:
            runner = _run_logprobs if message.get("kind") == "logprobs" else _run_case
            reply = runner(fn, message, groups, rank)
        except BaseException as error:  # noqa: B036 (a bug of cplab's own: reported, not hidden)
            reply = ("internal", f"{type(error).__name__}: {error}{_first_frame(error)}")
        conn.send_bytes(encode(reply))


def _stack_file(store, rank):
    return f"{store}.rank{rank}.stack"


# Where a stack's innermost frame is when the rank waits in a collective, not in the user's code.
_COLLECTIVE_FRAMES = (os.sep + os.path.join("torch", "distributed") + os.sep,)


def where_stuck(text):
    """(waiting, 'file.py:12 in fn') of a faulthandler dump: its innermost frame outside
    torch.distributed and cplab (the user's code that hangs, or that called the collective), and
    whether the rank waits in a collective there: its innermost frame is inside torch.distributed,
    or is a user line that waits on one (a P2P request's .wait() or a collective call, whose
    waiting happens in C++ with no Python frame of its own)."""
    frames = re.findall(r'File "([^"]+)", line (\d+) in (\S+)', text)
    if not frames:
        return False, "an unknown place"
    waiting = any(part in frames[0][0] for part in _COLLECTIVE_FRAMES)
    for path, line, function in frames:
        if not any(part in path for part in _COLLECTIVE_FRAMES) and not path.endswith("_ranks.py"):
            source = linecache.getline(path, int(line))
            waiting = waiting or bool(_WAITS.search(source))
            return waiting, f"{os.path.basename(path)}:{line} in {function}"
    return waiting, "cplab's rank loop"


# A source line that waits for other ranks: a request's wait(), or a call of torch.distributed.
_WAITS = re.compile(r"\.wait\(|\bdist\.\w+\(|torch\.distributed\.\w+\(")


def _module_of(fn):
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__module__", None)


class RankPool:
    """W gloo ranks running fn. ``run(messages, timeout)`` hands message r to rank r (one without
    inputs: the rank only takes part in creating the groups) and returns the replies and the
    ranks stuck."""

    def __init__(self, fn, world, timeout):
        self.fn_bytes = pickle.dumps(fn)
        self.fn_in_main = _module_of(fn) == "__main__"
        self.world, self.timeout = world, timeout
        self.procs, self.conns, self.dir = [], [], None
        self.starts = 0
        self.start_seconds = 0.0  # spent starting the ranks, every start together
        self.stacks = {}  # after run() found ranks stuck: rank -> where_stuck(its stack)

    def _start(self):
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["torch", "torch.distributed"])
        # A rank process runs the caller's main script again first (as multiprocessing does)
        # only when fn lives there: a script run by path that imports fn from a module needs no
        # `if __name__ == "__main__":` guard then (one run with -m is imported by name, guarded
        # or not, as multiprocessing always does).
        main = sys.modules.get("__main__")
        hidden = None
        if not self.fn_in_main and getattr(main, "__spec__", None) is None and hasattr(
                main, "__file__"):
            hidden = main.__file__
            del main.__file__
        try:
            self._spawn(context)
        finally:
            if hidden is not None:
                main.__file__ = hidden

    def _spawn(self, context):
        self.dir = tempfile.mkdtemp(prefix="cplab-ranks-")
        store = os.path.join(self.dir, "store")
        for rank in range(self.world):
            parent, child = context.Pipe()
            proc = context.Process(target=_rank_main, daemon=True, name=f"cplab-rank-{rank}",
                                   args=(rank, self.world, store, self.timeout, self.fn_bytes,
                                         child))
            proc.start()
            child.close()
            self.procs.append(proc)
            self.conns.append(parent)
        self.starts += 1
        began = time.monotonic()
        try:
            self._await_ready(began + STARTUP_SECONDS)
        finally:
            self.start_seconds += time.monotonic() - began

    def _await_ready(self, deadline):
        for rank, conn in enumerate(self.conns):
            if not conn.poll(max(0.0, deadline - time.monotonic())):
                self.close()
                raise PoolFailed(f"rank {rank} of {self.world} did not start within "
                                 f"{STARTUP_SECONDS:g} s")
            try:
                reply = conn.recv()
            except (EOFError, OSError):
                self.procs[rank].join(1)
                code = self.procs[rank].exitcode
                self.close()
                hint = (": fn is defined in the script being run, which each rank runs again "
                        "first; keep the script's top-level code under if __name__ == "
                        "'__main__':" if self.fn_in_main else "")
                raise PoolFailed(f"rank {rank} process ended while starting (exit code "
                                 f"{code}){hint}")
            if reply[0] != "ready":
                self.close()
                raise PoolFailed(f"rank {rank} could not start: {reply[1]}")

    def close(self):
        for conn in self.conns:
            try:
                conn.close()
            except OSError:
                pass
        for proc in self.procs:
            if proc.is_alive():
                proc.kill()
        for proc in self.procs:
            proc.join(5)
        self.procs, self.conns = [], []
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def run(self, messages, timeout):
        """Replies of every rank (None for ranks that were only asked to create the groups).
        Returns (replies, stuck): stuck lists the ranks that neither replied nor failed within
        `timeout` (none once a rank has failed: the others then get GRACE_SECONDS). After a
        failure or a rank stuck, the pool is torn down."""
        if not self.procs:
            self._start()
        for conn, message in zip(self.conns, messages):
            conn.send_bytes(encode(message))
        replies = [None] * self.world
        pending = set(range(self.world))
        deadline = time.monotonic() + timeout
        failed = False
        while pending:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready = multiprocessing.connection.wait([self.conns[r] for r in pending], left)
            for conn in ready:
                rank = self.conns.index(conn)
                pending.discard(rank)
                try:
                    replies[rank] = decode(conn.recv_bytes())
                except (EOFError, OSError):
                    self.procs[rank].join(1)
                    replies[rank] = ("died", f"its process ended (exit code "
                                             f"{self.procs[rank].exitcode})")
                if replies[rank][0] not in ("done", "idle") and not failed:
                    # The others may wait in a collective the failed rank never reaches: give them
                    # a moment to fail as well (so that the lowest failing rank is the one named,
                    # whichever replied first), not the whole bound.
                    failed = True
                    deadline = min(deadline, time.monotonic() + GRACE_SECONDS)
        stuck = [] if failed else sorted(pending)
        self.stacks = {}
        if stuck:
            self.stacks = self._stacks(stuck)
        if stuck or failed:
            self.close()
        return replies, stuck

    def _stacks(self, ranks):
        """Each stuck rank's stack, as where_stuck reads it."""
        store = os.path.join(self.dir, "store")
        for rank in ranks:
            try:
                os.kill(self.procs[rank].pid, signal.SIGUSR1)
            except OSError:
                pass
        found = {}
        deadline = time.monotonic() + 2.0
        while len(found) < len(ranks) and time.monotonic() < deadline:
            time.sleep(0.1)
            for rank in ranks:
                try:
                    with open(_stack_file(store, rank)) as dump:
                        text = dump.read()
                except OSError:
                    continue
                if "File " in text:
                    found[rank] = where_stuck(text)
        return found
