"""Property-based checks of your own CP code on cplab's random batches.

``check_sharder(fn, layout, ...)`` hands the batches cplab's RapidCheck generators draw (packed rows
of many shapes, BSHD rows of lengths around every multiple that matters, C from 1 up, holes in the
labels and masks, caller padding, ids equal to the pad id) to your sharder
``fn(batch, cp_rank, cp_size) -> dict`` for every rank, checks the shards as ``cplab.check_shards``
does, and on a failure lets RapidCheck shrink the batch to a minimal one before it raises
``cplab.Error`` (kind ``"check_failed"``) with that batch, the rank, the key and a one-line replay::

    cplab.testing.replay(my_sharder, 'LAYOUT cp=2 ... seed=17')   # the line the error printed

``check_loss(fn, layout, ...)`` does the same for a CP loss
``fn(logits_shard, labels_shard, cp_rank, cp_size[, group]) -> (loss, grad)``, and
``check_attention(fn, layout, ...)`` for a CP attention ``fn(q, k, v, meta) -> out | (out, lse)``
run on C real torch.distributed (gloo) ranks, forward and backward, and ``check_logprobs(fn,
layout, ...)`` for an RL pipeline's per-token log-probs computed on the shards and gathered back.

The generators run in ``cplab-case-driver``, a process of their own beside this module (Debian's
RapidCheck library cannot be linked into a Python extension); it is started per call and sends one
case at a time over a pipe.
"""
import functools
import inspect
import math
import os
import pickle
import random
import subprocess
import threading
import time

import torch

from . import _attention, _cplab, _logprobs
from ._error import Error
from ._ranks import PoolFailed, RankPool
from ._group import WAIT_SECONDS, Group, GroupBroken

__all__ = ["check_sharder", "check_loss", "check_attention", "check_logprobs", "replay",
           "replay_loss", "replay_attention", "replay_logprobs", "Summary"]

_DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cplab-case-driver")
_MAX_REASON = 1000


class Summary:
    """What a check that held ran: ``cases`` cases of ``layout`` drawn from ``seed``."""

    def __init__(self, layout, cases, seed):
        self.layout, self.cases, self.seed = layout, cases, seed

    def __repr__(self):
        return f"<cplab.testing.Summary {self.layout}: {self.cases} cases held, seed={self.seed}>"


class AttentionSummary(Summary):
    """check_attention's Summary, with where the time went: ``seconds`` (the whole check, rank
    start-up included), ``startup`` (starting the rank processes), ``cases_per_second`` (after
    start-up) and the shares of the cases' time spent in ``fn`` (the slowest rank's forward and
    backward, at C and at C = 1), in cplab's ``reference`` and in ``transport`` (the rest:
    drawing and sending the shards, the ranks' replies, the comparison)."""

    def __init__(self, layout, cases, seed, seconds, startup, case_seconds):
        super().__init__(layout, cases, seed)
        self.seconds, self.startup = seconds, startup
        total = max(case_seconds["total"], 1e-9)
        self.cases_per_second = cases / total
        self.fn_share = case_seconds["fn"] / total
        self.reference_share = case_seconds["reference"] / total
        self.transport_share = max(0.0, 1.0 - self.fn_share - self.reference_share)

    def __repr__(self):
        return (f"<cplab.testing.AttentionSummary {self.layout}: {self.cases} cases held, "
                f"seed={self.seed}, {self.cases_per_second:.1f} cases/s (fn "
                f"{self.fn_share:.0%}, reference {self.reference_share:.0%}, transport "
                f"{self.transport_share:.0%}), start-up {self.startup:.1f} s>")


def _name(fn):
    if isinstance(fn, functools.partial):  # name(keyword=value, ...), as the caller bound it
        bound = [repr(a) for a in fn.args] + [f"{k}={v!r}" for k, v in fn.keywords.items()]
        return f"{_name(fn.func)}({', '.join(bound)})"
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _one_line(text):
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_REASON else text[:_MAX_REASON] + " …"


def _cp_list(cp):
    if isinstance(cp, int):
        values = [cp]
    else:
        try:
            values = list(cp)
        except TypeError:  # a float, None, an object: not a list of ints
            raise Error(f"cp must be an int or a list of ints, got {cp!r}") from None
    if not values or not all(isinstance(c, int) and not isinstance(c, bool) for c in values):
        raise Error(f"cp must be an int or a list of ints, got {cp!r}")
    if any(c < 1 for c in values):
        raise Error(f"cp values must be at least 1, got {values}")
    return values


def _driver_args(layout, cp, cases, seed, rows, max_tokens, fixed, embeds, extra_keys,
                 options=None):
    if not isinstance(layout, str):
        raise Error(f"layout must be a layout name, got {layout!r}")
    registry = _cplab.layouts()
    names = [entry["name"] for entry in registry]
    declared = [name for entry in registry for name in entry["options"]]
    if layout not in names:
        raise Error(f"unknown layout '{layout}'; known layouts: {', '.join(names)}")
    if not isinstance(cases, int) or isinstance(cases, bool) or cases < 1:
        raise Error(f"cases must be a positive int, got {cases!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise Error(f"seed must be an int in [0, 2**63), got {seed!r}")
    if rows not in ("any", "bshd", "packed"):
        raise Error(f"rows must be 'any', 'bshd' or 'packed', got {rows!r}")
    args = ["--layout", layout, "--cp", ",".join(str(c) for c in _cp_list(cp)),
            "--cases", str(cases), "--seed", str(seed), "--rows", rows,
            "--max-tokens", str(max_tokens), "--embeds", "1" if embeds else "0",
            "--extra-keys", "1" if extra_keys else "0"]
    for option, value in fixed.items():
        if value is None:
            continue
        if option == "pad_policy":
            if value not in ("spec", "zero"):
                raise Error(f"pad_policy must be 'spec' or 'zero', got {value!r}")
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise Error(f"{option} must be a non-negative int, got {value!r}")
        args += ["--" + option.replace("_", "-"), str(value)]
    # The layouts' own options, by the names their declarations give (cplab.layouts()).
    for option, value in (options or {}).items():
        if option not in declared:
            raise Error(f"unexpected keyword argument '{option}'; layout options: "
                        f"{', '.join(declared)}")
        if value is None:
            continue
        if not isinstance(value, int) or value < 0:
            raise Error(f"{option} must be a non-negative int, got {value!r}")
        args += ["--option", f"{option}={int(value)}"]
    return args


def _drive(args, evaluate):
    """Runs the driver, answering each case with evaluate(line) ("" or a reason); returns the
    driver's last line split: ("passed", cases) or ("failed", cases, shrinks, line)."""
    if not os.access(_DRIVER, os.X_OK):
        raise Error(f"{_DRIVER} is missing: build the target cplab_case_driver", kind="internal")
    proc = subprocess.Popen([_DRIVER, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        while True:
            line = proc.stdout.readline()
            if not line:
                proc.wait()
                raise Error(f"cplab-case-driver ended (status {proc.returncode}) without a result: "
                            f"{_one_line(proc.stderr.read())}", kind="internal")
            line = line.rstrip("\n")
            if line.startswith("case "):
                reason = evaluate(line[5:])
                proc.stdin.write("ok\n" if not reason else f"fail {_one_line(reason)}\n")
                proc.stdin.flush()
            elif line.startswith("passed "):
                return ("passed", int(line.split()[1]))
            elif line.startswith("failed "):
                _, cases, shrinks, case = line.split(" ", 3)
                return ("failed", int(cases), int(shrinks), case)
            elif line.startswith("error "):
                raise Error(line[6:])
            else:
                raise Error(f"cplab-case-driver said {line!r}", kind="internal")
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


class _ShardOutcome:
    def __init__(self, case, batch):
        self.case, self.batch = case, batch
        self.shards, self.result, self.error, self.rank, self.key = [], None, None, None, None

    def reason(self):
        if self.error is not None:
            return f"fn raised {type(self.error).__name__}: {self.error} (rank {self.rank})"
        if self.result is None or self.result.ok:
            return ""
        diffs = self.result.differences
        more = f" (and {len(diffs) - 1} more)" if len(diffs) > 1 else ""
        return diffs[0].message + more


def _shard_contract(out, fn, rank, size, case):
    where = f"{_name(fn)}(batch, cp_rank={rank}, cp_size={size}) on '{case.headline}'"
    if isinstance(out, (list, tuple)):
        raise Error(f"{where} returned a {type(out).__name__} of {len(out)}: fn returns the shard "
                    f"dict of the one rank it is called for")
    if not isinstance(out, dict):
        raise Error(f"{where} returned a {type(out).__name__}, not a dict of tensors")
    for key, value in out.items():
        if not isinstance(key, str):
            raise Error(f"{where} returned a dict with a key {key!r} that is not a string")


def _run_sharder(fn, line, pad_id, pad_policy, passthrough):
    case = _cplab._Case(line, passthrough)
    batch = case.batch()
    outcome = _ShardOutcome(case, batch)
    for rank in range(case.cp):
        try:
            out = fn(dict(batch), rank, case.cp)
        except Exception as error:  # the sharder failed on this batch: a failure to shrink
            outcome.error, outcome.rank = error, rank
            return outcome
        _shard_contract(out, fn, rank, case.cp, case)
        outcome.shards.append(out)
    outcome.result = case.check(outcome.shards, pad_id=pad_id, pad_policy=pad_policy)
    if not outcome.result.ok:
        first = outcome.result.differences[0]
        outcome.rank, outcome.key = first.rank, first.key
    return outcome


def _replay_text(kind, fn, line, options):
    extra = "".join(f", {k}={v!r}" for k, v in options.items() if v not in (None, False))
    return f"cplab.testing.{kind}({_name(fn)}, {line!r}{extra})"


def _raise_sharder_failure(fn, outcome, options, header):
    replay_line = _replay_text("replay", fn, outcome.case.line, options)
    where = f"rank {outcome.rank}" + (f" key {outcome.key}" if outcome.key else "")
    message = (f"{header}{_name(fn)} fails on {outcome.case.headline} "
               f"({outcome.case.documents} documents), {where}: {outcome.reason()} "
               f"· replay: {replay_line}")
    error = Error(_one_line(message), kind="check_failed", case=outcome.case.line,
                  rank=outcome.rank, key=outcome.key, batch=outcome.batch, shards=outcome.shards,
                  result=outcome.result, replay=replay_line, documents=outcome.case.documents)
    raise error from outcome.error


def check_sharder(fn, layout, *, cp=(1, 2, 3, 4), cases=100, seed=None, rows="any",
                  max_tokens=256, pad_id=None, pad_policy=None, embeds=False,
                  extra_keys=False, passthrough=False, **options):
    """Checks ``fn(batch, cp_rank, cp_size) -> dict`` on ``cases`` random batches of ``layout``.

    fn is your sharder: given the whole batch dict (input_ids [B,S], labels [B,S], valid [B,S]
    bool, and as drawn position_ids [B,S], loss_mask, padding_mask; packed rows add seq_lens [1,n]
    and, where the caller padded its documents, seq_lens_padded), it returns what rank cp_rank of
    cp_size holds: every token key sharded (position_ids too; computed before partitioning when
    the batch has none), and cu_seqlens where the layout has whole local documents. Padding
    follows SPEC §2: the pad id, continuing positions, IGNORE (-100) labels, masks off.

    The batches are drawn by cplab's own RapidCheck generators (``seed``; a fresh random one when
    None), with C from ``cp`` (an int or a list), of ``rows`` "any", "bshd" or "packed", rows of
    at most about ``max_tokens`` padded tokens. The layout's own options (keywords named as
    ``cplab.layouts()`` lists them: pad_multiple, chunk_size, ...) are fixed to what you give, or
    to cplab's defaults; ``pad_id`` and
    ``pad_policy`` ("spec" or "zero") are read off your shards unless given. ``embeds=True`` draws
    inputs_embeds batches too, ``extra_keys=True`` further token keys in batch["extra_tokens"],
    ``passthrough=True`` a batch["passthrough"] dict every rank must keep unchanged.

    Returns a Summary when every case held. On the first failure RapidCheck shrinks the batch
    (fewer documents, shorter ones, smaller C) while it still fails, and cplab.Error is raised
    (kind "check_failed") with ``case`` (its one-line form), ``batch``, ``shards`` (what fn gave),
    ``result`` (a CheckResult), ``rank``, ``key``, ``documents`` and ``replay``. An exception fn
    raises is such a failure too (shrunk, chained as __cause__); fn returning anything but a dict
    of tensors is bad input (kind "bad_input"), raised at once.
    """
    seed = random.randrange(2**32) if seed is None else seed
    fixed = dict(pad_id=pad_id, pad_policy=pad_policy)
    args = _driver_args(layout, cp, cases, seed, rows, max_tokens, fixed, embeds, extra_keys,
                        options)
    if not callable(fn):
        raise Error(f"fn must be callable, got a {type(fn).__name__}")
    conventions = dict(pad_id=pad_id, pad_policy=pad_policy, passthrough=passthrough)

    def evaluate(line):
        return _run_sharder(fn, line, pad_id, pad_policy, passthrough).reason()

    verdict = _drive(args, evaluate)
    if verdict[0] == "passed":
        return Summary(layout, verdict[1], seed)
    _, ran, shrinks, line = verdict
    outcome = _run_sharder(fn, line, pad_id, pad_policy, passthrough)
    if not outcome.reason():
        raise Error(f"{_name(fn)} failed on {line!r} and then passed on it: it is not a function "
                    f"of its inputs (state kept between calls?)", kind="check_failed", case=line)
    _raise_sharder_failure(fn, outcome, conventions,
                           f"seed={seed}: after {ran} cases and {shrinks} shrinks, ")


def replay(fn, case, *, pad_id=None, pad_policy=None, passthrough=False):
    """Runs sharder fn on one case (the one-line form a failure prints) and raises the same
    cplab.Error when it fails; returns the CheckResult when it holds."""
    if not isinstance(case, str):
        raise Error(f"case must be a case's one-line form, got {case!r}")
    outcome = _run_sharder(fn, case, pad_id, pad_policy, passthrough)
    if outcome.reason():
        _raise_sharder_failure(fn, outcome, dict(pad_id=pad_id, pad_policy=pad_policy,
                                                 passthrough=passthrough), "")
    return outcome.result


# ---- the CP loss ----

def _loss_params(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False, frozenset()
    positional = [p for p in params.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params.values())
    named = {name for name in ("num_label_tokens", "valid", "shift") if name in params}
    return len(positional) >= 5 or varargs or "group" in params, named


def _mtp_options(depths, scaling_factor):
    if depths is None:
        return None
    if not isinstance(depths, int) or isinstance(depths, bool) or not 1 <= depths <= 16:
        raise Error(f"depths must be an int in [1, 16] (the MTP depths, depth 1 the next-token "
                    f"loss) or None, got {depths!r}")
    if (not isinstance(scaling_factor, (int, float)) or isinstance(scaling_factor, bool)
            or not math.isfinite(scaling_factor)):
        raise Error(f"mtp_scaling_factor must be a finite number, got {scaling_factor!r}")
    return depths, float(scaling_factor)


def _shift_for(rank, group, inputs):
    """The rank's ``shift(local, k, fill=-100)``: its shard [B, l, ...] shifted k slots along the
    global stream within documents (SPEC §6.1, as cplab.shift defines it: ``fill`` where the slot
    k ahead is past the document or one the layout added), each slot fetched from whichever rank
    holds it. A collective: one all_reduce of the shards placed on the stream, so every rank calls
    it alike. Values travel in int64 (integers) or float64, and no gradient flows through it."""
    index = inputs["index"][rank]
    docs, packed, length = inputs["doc_ids"], inputs["packed"], inputs["padded_len"]
    caller_pos = inputs["caller_pos"]
    rows = torch.arange(index.shape[0]).unsqueeze(1)

    def shift(local, k, fill=-100):
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise Error(f"shift(local, k): k must be an int >= 1, got {k!r}")
        if not torch.is_tensor(local) or tuple(local.shape[:2]) != tuple(index.shape):
            raise Error(f"shift(local, k): local must be this rank's shard [B, l, ...] = "
                        f"{list(index.shape)}, got {getattr(local, 'shape', type(local).__name__)}")
        wire = torch.float64 if local.dtype.is_floating_point else torch.int64
        stream = torch.zeros((index.shape[0], length) + tuple(local.shape[2:]), dtype=wire)
        stream[rows, index] = local.detach().to(wire)
        stream = group.all_reduce(stream)
        ahead = index + min(k, length)
        within = ahead < length
        ahead = ahead.clamp(max=length - 1)
        within &= caller_pos.gather(1, ahead) >= 0
        if packed:
            mine = docs.gather(1, index)
            within &= (mine != 0) & (docs.gather(1, ahead) == mine)
        picked = stream[rows, ahead]
        keep = within.reshape(tuple(within.shape) + (1,) * (local.dim() - 2))
        return torch.where(keep, picked, torch.full_like(picked, fill)).to(local.dtype)

    return shift


class _LossOutcome:
    def __init__(self, case):
        self.case, self.error, self.rank, self.reason_text = case, None, None, ""
        self.losses, self.grads = [], []

    def reason(self):
        if self.error is not None:
            return f"fn raised {type(self.error).__name__}: {self.error} (rank {self.rank})"
        return self.reason_text


def _loss_contract(out, fn, rank, size, logits):
    where = f"{_name(fn)}(logits_shard, labels_shard, cp_rank={rank}, cp_size={size})"
    loss, grad = (out if isinstance(out, tuple) and len(out) == 2 else (out, None))
    if not (torch.is_tensor(loss) and loss.numel() == 1) and not isinstance(loss, (int, float)):
        raise Error(f"{where} returned {type(out).__name__}: it returns (loss, grad) with loss a "
                    f"scalar tensor or float and grad a tensor like logits_shard (or None)")
    if grad is None and torch.is_tensor(loss) and loss.requires_grad:
        (grad,) = torch.autograd.grad(loss, logits, allow_unused=True)
    if grad is not None and not torch.is_tensor(grad):
        raise Error(f"{where} returned a grad of type {type(grad).__name__}, not a tensor")
    value = float(loss.detach()) if torch.is_tensor(loss) else float(loss)
    return value, (None if grad is None else grad.detach())


class _RankHung(Error):
    """A rank's fn neither returned nor reached the others within the bound: not shrunk (every
    shrink step would wait the bound again)."""


def _run_loss(fn, line, rank_timeout=WAIT_SECONDS, mtp=None):
    case = _cplab._Case(line, False)
    inputs = case.loss_inputs() if mtp is None else case.mtp_inputs(mtp[0])
    outcome = _LossOutcome(case)
    size = case.cp
    wants_group, named = _loss_params(fn)
    group = Group(size, rank_timeout)
    results = [None] * size
    failures = [None] * size

    def rank_body(rank):
        logits = inputs["logits"][rank].requires_grad_(True)
        try:
            args = [logits, inputs["labels"][rank], rank, size]
            kwargs = {}
            if wants_group:
                args.append(group.rank(rank))
            if "num_label_tokens" in named:
                kwargs["num_label_tokens"] = inputs["num_label_tokens"]
            if mtp is not None and "valid" in named:
                kwargs["valid"] = inputs["valid"][rank]
            if mtp is not None and "shift" in named:
                kwargs["shift"] = _shift_for(rank, group.rank(rank), inputs)
            returned = fn(*args, **kwargs)
            group.returned(rank)
            results[rank] = _loss_contract(returned, fn, rank, size, logits)
        except BaseException as error:  # noqa: B036 (handed to the caller's thread)
            failures[rank] = error
            group.abort()

    threads = [threading.Thread(target=rank_body, args=(r,), daemon=True) for r in range(size)]
    for thread in threads:
        thread.start()
    # A rank still running past the bound is hung in fn (its thread is left behind: Python
    # cannot stop it); the ranks waiting for it were released by the group's own bound.
    deadline = time.monotonic() + rank_timeout + 1.0
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    hung = [rank for rank, thread in enumerate(threads) if thread.is_alive()]
    if hung:
        raise _RankHung(_one_line(
            f"{_name(fn)} on {case.headline}: rank {hung[0]} neither returned nor reached the "
            f"other ranks within rank_timeout={rank_timeout:g} s (ranks {hung} still running; a "
            f"hang is not shrunk) · replay: {_replay_text('replay_loss', fn, line, _mtp_kw(mtp))}"),
            kind="check_failed", case=line, rank=hung[0], key="loss")
    contract = [f for f in failures if isinstance(f, Error)]
    if contract:
        raise contract[0]
    for rank, failure in enumerate(failures):
        if failure is not None and not isinstance(failure, GroupBroken):
            outcome.error, outcome.rank = failure, rank
            return outcome
    for rank, failure in enumerate(failures):
        if failure is not None:
            outcome.error, outcome.rank = failure, rank
            return outcome
    outcome.losses = [r[0] for r in results]
    outcome.grads = [r[1] for r in results]
    outcome.reason_text = (case.check_loss(outcome.losses, outcome.grads) if mtp is None else
                           case.check_mtp(outcome.losses, outcome.grads, *mtp))
    if outcome.reason_text.startswith("rank "):
        outcome.rank = int(outcome.reason_text.split()[1])
    return outcome


def _mtp_kw(mtp):
    return {} if mtp is None else {"depths": mtp[0], "mtp_scaling_factor": mtp[1]}


def _raise_loss_failure(fn, outcome, header, mtp=None):
    replay_line = _replay_text("replay_loss", fn, outcome.case.line, _mtp_kw(mtp))
    message = (f"{header}{_name(fn)} fails on {outcome.case.headline} "
               f"({outcome.case.documents} documents): {outcome.reason()} · replay: {replay_line}")
    raise Error(_one_line(message), kind="check_failed", case=outcome.case.line,
                rank=outcome.rank, key="loss", losses=outcome.losses, replay=replay_line,
                documents=outcome.case.documents) from outcome.error


def check_loss(fn, layout, *, cp=(1, 2, 3, 4), cases=100, seed=None, rows="any", max_tokens=256,
               rank_timeout=WAIT_SECONDS, depths=None, mtp_scaling_factor=0.1, **options):
    """Checks a CP loss ``fn(logits_shard, labels_shard, cp_rank, cp_size[, group])`` on random
    batches of ``layout`` against SPEC §6.

    Each rank is run in a thread of its own and handed its logits shard (float32 [B,l,V], a leaf
    that requires grad) and its labels shard: each local token's target, already shifted across
    shard boundaries (-100 where the token has no target, is ignored, or is not valid), as
    torch's context_parallel and Automodel shift labels before sharding. A fifth parameter (or one
    named ``group``) receives the CP group: ``group.all_reduce(t)`` returns the sum of t over the
    ranks. A parameter named ``num_label_tokens`` receives N, the global count of contributing
    tokens, as Automodel's and HF's losses take it.

    fn returns ``(loss, grad)``: loss_r = (sum of its tokens' cross entropy) * C / N, so that the
    mean over the ranks is the global shifted mean, and grad = d loss_r / d logits_shard (or
    None, or the loss alone, to have it taken by autograd). Failures are shrunk and raised as in
    check_sharder; the options are check_sharder's.

    A rank whose fn returns without reaching an all_reduce the other ranks wait in (or calls one
    more than they do) fails the case at once, naming it. A rank that neither returns nor arrives
    fails the whole check after ``rank_timeout`` seconds (default 10), naming it, without
    shrinking: every shrink step would wait that long again.

    ``depths=D`` checks a multi-token prediction loss (SPEC §6.1) instead: fn is handed the
    logits of every depth, float32 [D,B,l,V] with depth 1's first (``logits[k-1]`` at slot t
    predicts the label at t + k in the same document), and the labels **unshifted** as the layout
    shards them: the shift by k is fn's own. Parameters named ``valid`` (the shard's keep-mask,
    bool [B,l]), ``shift`` (``shift(local, k, fill=-100)``: a shard shifted k slots along the
    global stream within documents, wherever each slot lives, as ``cplab.shift`` defines it; a
    collective every rank calls alike) and
    ``num_label_tokens`` (the list N_1..N_D) receive them. fn returns loss_r = C * (S_1/N_1 +
    lambda/(D-1) * sum_k S_k/N_k), S_k the sum of its tokens' depth-k cross entropy and lambda =
    ``mtp_scaling_factor`` (default 0.1), and its gradient on all D logits (or lets autograd take it).
    """
    _attention.check_rank_timeout(rank_timeout)
    mtp = _mtp_options(depths, mtp_scaling_factor)
    seed = random.randrange(2**32) if seed is None else seed
    args = _driver_args(layout, cp, cases, seed, rows, max_tokens, {}, False, False, options)
    if not callable(fn):
        raise Error(f"fn must be callable, got a {type(fn).__name__}")
    verdict = _drive(args, lambda line: _run_loss(fn, line, rank_timeout, mtp).reason())
    if verdict[0] == "passed":
        return Summary(layout, verdict[1], seed)
    _, ran, shrinks, line = verdict
    outcome = _run_loss(fn, line, rank_timeout, mtp)
    if not outcome.reason():
        raise Error(f"{_name(fn)} failed on {line!r} and then passed on it: it is not a function "
                    f"of its inputs", kind="check_failed", case=line)
    _raise_loss_failure(fn, outcome, f"seed={seed}: after {ran} cases and {shrinks} shrinks, ",
                        mtp)


def replay_loss(fn, case, *, depths=None, mtp_scaling_factor=0.1):
    """Runs loss fn on one case and raises the same cplab.Error when it fails."""
    mtp = _mtp_options(depths, mtp_scaling_factor)
    outcome = _run_loss(fn, case, mtp=mtp)
    if outcome.reason():
        _raise_loss_failure(fn, outcome, "", mtp)
    return outcome.losses


# ---- the CP attention ----

def _attention_args(layout, cp, cases, seed, rows, max_tokens, heads, kv_heads, head_dim, mask,
                    options, opts):
    if opts["qkv_format"] == "thd":
        if rows == "bshd":
            raise Error("qkv_format='thd' takes packed rows: rows must be 'packed' or 'any'")
        rows = "packed"
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or not (
            1 <= max_tokens <= 4096):
        raise Error(f"max_tokens must be an int in [1, 4096], got {max_tokens!r}")
    args = _driver_args(layout, cp, cases, seed, rows, max_tokens, {}, False, False, options)
    for flag, value, most in (("--heads", heads, 256), ("--kv-heads", kv_heads, 256),
                              ("--head-dim", head_dim, 512)):
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
            raise Error(f"{flag[2:].replace('-', '_')} must be an int in [1, {most}] or None, "
                        f"got {value!r}")
        args += [flag, str(value)]
    if heads is not None and kv_heads is not None and (kv_heads > heads or heads % kv_heads):
        raise Error(f"kv_heads={kv_heads} must divide heads={heads}")
    if not isinstance(mask, str):
        raise Error(f"mask must be a mask's text ('causal', 'window:W', 'chunked:K', "
                    f"'bidirectional:B-E', or a family alone), got {mask!r}")
    args += ["--attention", "1", "--mask", mask]
    if opts["algo"]:
        args += ["--algo", opts["algo"]]
    return args


def _sendable(fn):
    if not callable(fn):
        raise Error(f"fn must be callable, got a {type(fn).__name__}")
    try:
        pickle.dumps(fn)
    except Exception as error:  # noqa: BLE001 (any pickling failure means the same to the user)
        raise Error(_one_line(
            f"{_name(fn)} cannot be sent to the rank processes ({type(error).__name__}: {error}):"
            f" a lambda, a closure or a function defined inside another cannot; define it at "
            f"module level of an importable module")) from None


def _pool_error(fn, error):
    text = str(error)
    if "if __name__ ==" in text:  # the caller's script, unguarded, ran again in a rank
        return Error(_one_line(f"the rank processes could not start: {text}"))
    if any(word in text for word in ("AttributeError", "ModuleNotFoundError", "ImportError",
                                     "Can't get attribute")):
        return Error(_one_line(f"{_name(fn)} could not be loaded in a rank process ({text}): "
                               f"define it at module level of a module the ranks can import "
                               f"(in a script, under if __name__ == '__main__' only the call)"))
    return Error(_one_line(f"the rank processes could not start: {text}"), kind="internal")


def _raise_ranks_failure(replay, fn, outcome, keywords, header):
    """check_attention's and check_logprobs's failure: one line, its replay line whole."""
    given = "".join(f", {k}={v!r}" for k, v in keywords.items())
    replay_line = f"cplab.testing.{replay}({_name(fn)}, {outcome.line!r}{given})"
    # Only the reason is cut short (a long torch error): the case and the replay line stay whole.
    message = (f"{header}{_name(fn)} fails on {outcome.headline}: {_one_line(outcome.reason)} · "
               f"replay: {replay_line}")
    raise Error(" ".join(message.split()), kind="check_failed", case=outcome.line,
                rank=outcome.rank, key=outcome.tensor, tensor=outcome.tensor, replay=replay_line)


def _raise_attention_failure(fn, outcome, opts, header):
    _raise_ranks_failure("replay_attention", fn, outcome, opts.replay_keywords(), header)


def _on_ranks(fn, world, rank_timeout, body):
    """body(pool) on a RankPool of `world` ranks running fn, closed whatever happens; a pool that
    cannot start is one cplab.Error line."""
    pool = RankPool(fn, world, rank_timeout)
    try:
        return body(pool)
    except PoolFailed as error:
        raise _pool_error(fn, error) from None
    finally:
        pool.close()


def _passed_or_raise(fn, seed, verdict, result, raise_failure):
    """The summary of a check on ranks that passed; else its shrunk failure, raised by
    raise_failure(outcome, header), or, when the shrunk case then passed, that fn is not a
    function of its inputs."""
    if verdict[0] == "passed":
        return result
    _, ran, shrinks, line = verdict
    if not result.reason:
        raise _not_a_function(fn, line)
    raise_failure(result, f"seed={seed}: after {ran} cases and {shrinks} shrinks, ")


def _not_a_function(fn, line):
    """The shrunk case passed when run again: fn keeps state between calls."""
    return Error(f"{_name(fn)} failed on {line!r} and then passed on it: it is not a function of "
                 f"its inputs", kind="check_failed", case=line)


def check_attention(fn, layout, *, algo=None, cp=(1, 2, 3, 4), cases=100, seed=None, rows="any",
                    dtype=torch.float32, heads=None, kv_heads=None, head_dim=None, backward=True,
                    qkv_format="bshd", pad_rows="ignore", mask="causal", max_tokens=64,
                    rank_timeout=30.0, **options):
    """Checks a CP attention ``fn(q, k, v, meta) -> out`` or ``(out, lse)`` on ``cases`` random
    rows of ``layout``, on C real torch.distributed ranks, against cplab's exact attention.

    The ranks are gloo processes on 127.0.0.1 (max(cp) of them, started once per call): fn is
    sent to them by reference, so it must be defined at module level of an importable module.
    Each rank gets its local shards in the layout's order, as leaves that require grad:
    q [B, l, H, d] and k, v [B, l, H_kv, d] (``qkv_format="thd"``: [l, H, d], packed rows), and
    ``meta`` with ``cp_rank``, ``cp_size``, ``group`` (the CP process group: call
    dist.all_gather, dist.batch_isend_irecv, dist.all_to_all_single on it), ``layout``,
    ``index`` (int64 [B, l]: the global slot of every local slot), ``valid`` (bool [B, l]: false
    on padding; a mask must read it: a document's own padding keeps its ``doc_ids``, row padding
    has 0), ``positions`` (in its document, as masks measure them), ``position_ids``, ``spans``
    (each token's bidirectional span, 0: none), ``softmax_scale``, ``mask`` (its canonical text:
    "causal" is causal within each document), ``padded_seq_len``, ``heads``, ``kv_heads``
    (query head h reads KV head h * kv_heads // heads), ``algo``; local ``cu_seqlens`` and ``max_seqlen`` where the layout's ranks hold
    whole documents; ``cu_seqlens_q``, ``cu_seqlens_k`` and ``k_slice`` (the global slots the
    key segments index) where they attend through varlen segments; ``ulysses_group`` and
    ``ring_group`` under usp.

    out (and lse, natural log, q's shape without d) are compared with the exact attention, then
    ``out.backward(grad_out)`` runs on every rank and q.grad, k.grad, v.grad are compared with
    the exact gradients. The tolerance is calibrated on fn itself (SPEC §13.6): each case is run
    at C = 1 too, and a CP result may be at most 4x the unsharded error plus a small floor. The
    unsharded run must be within 2^-5 of each tensor's largest value. ``pad_rows="zero"`` also
    requires exact zeros in out and the grads at padding.

    C is drawn from ``cp``; ``heads``, ``kv_heads``, ``head_dim`` are drawn (1 to 4 heads per
    rank of a head all-to-all, every KV group size, head dims 1-8 and 16-128, scores up to 1e4)
    unless fixed; ``algo`` naming a head all-to-all (Ulysses, or usp's groups) keeps the heads
    divisible as it needs; ``mask`` is a mask or a family ("window") whose size is drawn per case; rows are
    about ``max_tokens`` long. Returns an AttentionSummary. A failure is shrunk by RapidCheck and
    raised as cplab.Error (kind "check_failed") naming the rank, the tensor, the first global
    slot past its bound (in row order), its error against the bound, the case and a replay line. fn raising, a wrong
    shape or dtype, out not requiring grad, an input changed in place, are failures too. A rank
    that neither returns nor fails within ``rank_timeout`` seconds ends the check at once,
    naming it (not shrunk).
    """
    opts = _attention.Options(_name(fn), algo, dtype, backward, qkv_format, pad_rows,
                              rank_timeout)
    seed = random.randrange(2**32) if seed is None else seed
    args = _attention_args(layout, cp, cases, seed, rows, max_tokens, heads, kv_heads, head_dim,
                           mask, options, opts)
    _sendable(fn)
    began = time.perf_counter()
    spent = {"fn": 0.0, "reference": 0.0, "total": 0.0}

    def check(pool):
        def evaluate(line):
            starting = pool.start_seconds
            outcome = _attention.evaluate(pool, line, opts)
            outcome.seconds["total"] -= pool.start_seconds - starting  # the ranks' start-up apart
            for key in spent:
                spent[key] += outcome.seconds[key]
            return outcome.reason

        verdict = _drive(args, evaluate)
        if verdict[0] == "passed":
            return verdict, AttentionSummary(layout, verdict[1], seed,
                                             time.perf_counter() - began, pool.start_seconds,
                                             spent)
        return verdict, _attention.evaluate(pool, verdict[3], opts)

    verdict, result = _on_ranks(fn, max(_cp_list(cp)), opts["rank_timeout"], check)
    return _passed_or_raise(fn, seed, verdict, result,
                            lambda outcome, header: _raise_attention_failure(fn, outcome, opts,
                                                                             header))


def replay_attention(fn, case, *, algo=None, dtype=torch.float32, backward=True,
                     qkv_format="bshd", pad_rows="ignore", rank_timeout=30.0):
    """Runs attention fn on one case (the line a failure printed, ' | heads=...' included) and
    raises the same cplab.Error when it fails."""
    if not isinstance(case, str):
        raise Error(f"case must be a case's one-line form, got {case!r}")
    opts = _attention.Options(_name(fn), algo, dtype, backward, qkv_format, pad_rows,
                              rank_timeout)
    _sendable(fn)
    case_text, _ = _attention.split_line(case)
    outcome = _on_ranks(fn, _cplab._Case(case_text, False).cp, opts["rank_timeout"],
                        lambda pool: _attention.evaluate(pool, case, opts))
    if outcome.reason:
        _raise_attention_failure(fn, outcome, opts, "")
    return outcome


# ---- the RL log-prob pipeline ----

def _logprobs_options(fn, rank_timeout):
    _attention.check_rank_timeout(rank_timeout)
    return {"fn_name": _name(fn), "rank_timeout": float(rank_timeout)}


def _raise_logprobs_failure(fn, outcome, header):
    _raise_ranks_failure("replay_logprobs", fn, outcome, {}, header)


def check_logprobs(fn, layout, *, cp=(1, 2, 3, 4), cases=100, seed=None, rows="any",
                   max_tokens=64, rank_timeout=30.0, **options):
    """Checks an RL log-prob pipeline ``fn(logits_shard, labels_shard, meta) -> logprobs`` or
    ``(logprobs, entropy)`` on ``cases`` random batches of ``layout``, on C real
    torch.distributed (gloo) ranks, as check_attention runs them.

    Each rank gets its logits shard (float32 [B, l, V]) and its labels shard, unshifted, as the
    layout shards them (-100 on padding), and ``meta``: ``cp_rank``, ``cp_size``, ``group``,
    ``layout``, ``index`` (the global slot of each local slot), ``valid``, ``doc_ids``,
    ``position_ids``, ``caller_pos`` (the caller position each local slot holds, -1 where the
    layout added it), ``seq_len`` (S), ``padded_seq_len`` and, where the ranks hold whole
    documents, ``cu_seqlens``. Every rank returns the gathered per-token log-probs [B, S] in the
    caller's order: at position t, log_softmax(logits[t])[target(t)], target(t) being the next
    label in t's document (SPEC §6: fetched from whichever rank holds it, never from a roll over
    the row or a local shift after the split), and 0 where t has no target (the document's last
    token, or the next label is -100); with entropy (every rank alike), -sum(p log p) of every
    position a rank holds. Both are 0 at a caller position no rank holds.
    Failures are shrunk and raised as one cplab.Error line with a replay_logprobs line.
    """
    opts = _logprobs_options(fn, rank_timeout)
    seed = random.randrange(2**32) if seed is None else seed
    args = _driver_args(layout, cp, cases, seed, rows, max_tokens, {}, False, False, options)
    _sendable(fn)

    def check(pool):
        verdict = _drive(args, lambda line: _logprobs.evaluate(pool, line, opts).reason)
        if verdict[0] == "passed":
            return verdict, Summary(layout, verdict[1], seed)
        return verdict, _logprobs.evaluate(pool, verdict[3], opts)

    verdict, result = _on_ranks(fn, max(_cp_list(cp)), opts["rank_timeout"], check)
    return _passed_or_raise(fn, seed, verdict, result,
                            lambda outcome, header: _raise_logprobs_failure(fn, outcome, header))


def replay_logprobs(fn, case, *, rank_timeout=30.0):
    """Runs log-prob pipeline fn on one case and raises the same cplab.Error when it fails."""
    if not isinstance(case, str):
        raise Error(f"case must be a case's one-line form, got {case!r}")
    opts = _logprobs_options(fn, rank_timeout)
    _sendable(fn)
    outcome = _on_ranks(fn, _cplab._Case(case, False).cp, opts["rank_timeout"],
                        lambda pool: _logprobs.evaluate(pool, case, opts))
    if outcome.reason:
        _raise_logprobs_failure(fn, outcome, "")
    return outcome
