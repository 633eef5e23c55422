"""cplab.testing.check_attention: a user's CP attention, forward and backward, on real gloo ranks,
against cplab's exact unsharded attention (SPEC §13.6 states the rule)."""
import math
import time

import torch

from . import _cplab
from ._error import Error

# SPEC §13.6: a CP result may be this many times worse than the same kernel unsharded...
CALIBRATION_FACTOR = 4.0
# ... plus this share of the tensor's scale (its largest exact value, or its unit when larger: see
# Inputs.units) for f32 merges of C partial results, plus for dK and dV, which production reduces
# over the ranks in the input dtype, C unit roundoffs of it.
FLOOR_SHARE = 2.0**-16
# The unsharded run itself must be within this share of the tensor's scale: a kernel wrong even at
# C = 1 would otherwise calibrate its own tolerance.
UNSHARDED_SHARE = 2.0**-5

UNIT_ROUNDOFF = {torch.float32: 2.0**-24, torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
TENSORS = ("out", "lse", "dq", "dk", "dv")


class Shape:
    """The attention shape of a case: the part of its line after ' | '."""

    def __init__(self, text):
        fields = dict(item.split("=", 1) for item in text.split())
        try:
            self.heads = int(fields["heads"])
            self.kv_heads = int(fields["kv_heads"])
            self.head_dim = int(fields["head_dim"])
            self.scale_exp = int(fields["scale"].split("e", 1)[1])
        except (KeyError, ValueError, IndexError):
            raise Error(f"an attention case ends ' | heads=H kv_heads=K head_dim=D scale=1eE', "
                        f"not ' | {text}'") from None
        if not (1 <= self.kv_heads <= self.heads and self.heads % self.kv_heads == 0
                and self.heads <= 256 and 1 <= self.head_dim <= 512 and 0 <= self.scale_exp <= 6):
            raise Error(f"attention shape out of range: ' | {text}' (kv_heads dividing heads, "
                        f"heads <= 256, head_dim <= 512, scale up to 1e6)")


def split_line(line):
    if " | " not in line:
        raise Error(f"an attention case is '<case> | heads=H kv_heads=K head_dim=D scale=1eE', "
                    f"got {line!r}")
    case_text, shape_text = line.split(" | ", 1)
    return case_text, Shape(shape_text)


class Inputs:
    """One case's global tensors on a plan's padded stream: each caller token's values are the
    same under every plan of the row (so C = 1 and C = C see one problem); slots a layout adds
    hold values of their own (an attention that reads padding changes its result)."""

    def __init__(self, case, layout, shape, dtype):
        rows = len(layout["rows"])
        seq = max(1, layout["caller_len"])  # S: the caller's row, under every plan of it
        generator = torch.Generator().manual_seed(_seed_of(case.line))
        heads, kv, d = shape.heads, shape.kv_heads, shape.head_dim
        magnitude = math.sqrt(10.0**shape.scale_exp)

        def draw(h, scale):
            return torch.randn(rows, seq, h, d, generator=generator, dtype=torch.float64) * scale

        self.caller = {"q": draw(heads, magnitude), "k": draw(kv, magnitude), "v": draw(kv, 1.0),
                       "grad_out": draw(heads, 1.0)}
        # A loss gives padding no gradient: on() makes grad_out 0 wherever a slot is not a real
        # token, so a kernel whose padding queries attend real keys (a plain causal kernel on
        # padded rows) gets the real tokens' dK and dV right, as it does in training.
        self.pad_seed = _seed_of(case.line) ^ 0x5EED
        self.dtype = dtype

    def units(self, shape):
        """Per tensor, the magnitude its values are measured against besides their own largest
        (SPEC §13.6): what one term of it is made of, so that a tensor that is all but zero (a
        saturated softmax's dQ) is not judged by its own rounding noise."""
        top = {name: float(t.abs().max()) if t.numel() else 0.0 for name, t in self.caller.items()}
        scale, d = 1.0 / math.sqrt(shape.head_dim), shape.head_dim
        chain = d * scale * top["v"] * top["grad_out"]
        return {"out": top["v"], "lse": 1.0, "dq": chain * top["k"], "dk": chain * top["q"],
                "dv": top["grad_out"]}

    def on(self, layout):
        """The [B, L, ...] tensors of a plan's padded stream, in the check's dtype."""
        generator = torch.Generator().manual_seed(self.pad_seed)
        out = {}
        for name, values in self.caller.items():
            rows = []
            for b, row in enumerate(layout["rows"]):
                pos = row["caller_pos"]
                top = float(values[b].abs().max()) if values[b].numel() else 1.0
                filler = torch.randn(pos.numel(), *values.shape[2:], generator=generator,
                                     dtype=torch.float64) * max(top, 1.0)
                taken = values[b][pos.clamp(min=0)]
                rows.append(torch.where((pos >= 0).view(-1, *[1] * (values.dim() - 2)), taken,
                                        filler))
            out[name] = torch.stack(rows).to(self.dtype)
        real = torch.stack([row["real"] for row in layout["rows"]])
        out["grad_out"] = out["grad_out"] * real[..., None, None].to(self.dtype)
        return out


def _seed_of(line):
    for item in line.split():
        if item.startswith("seed="):
            return int(item[5:]) % (2**63)
    return 0


def reference(case, inputs, shape):
    raw = case.attention_reference(inputs["q"], inputs["k"], inputs["v"], inputs["grad_out"])
    b, length = inputs["q"].shape[:2]
    shapes = {"out": (b, length, shape.heads, shape.head_dim), "lse": (b, length, shape.heads),
              "dq": (b, length, shape.heads, shape.head_dim),
              "dk": (b, length, shape.kv_heads, shape.head_dim),
              "dv": (b, length, shape.kv_heads, shape.head_dim)}
    return {name: torch.frombuffer(bytearray(raw[name]), dtype=torch.float64).view(shapes[name])
            for name in TENSORS}


def groups_of(cp, ring_degree):
    """The process groups a case at C uses, in creation order, and which of them each rank is
    handed under which meta name: the CP group, and where the layout has rings of Ulysses groups
    (R > 1) those groups, U = C / R consecutive ranks each, and the rings, ranks U apart (SPEC
    §10.4's global rank ring·U + ulysses)."""
    cp_group = tuple(range(cp))
    order = [cp_group]
    per_rank = [{"group": cp_group} for _ in range(cp)]
    if ring_degree > 1:
        u = cp // ring_degree
        ulysses = [tuple(range(q * u, q * u + u)) for q in range(ring_degree)]
        rings = [tuple(range(x, cp, u)) for x in range(u)]
        order += ulysses + rings
        for r in range(cp):
            per_rank[r]["ulysses_group"] = ulysses[r // u]
            per_rank[r]["ring_group"] = rings[r % u]
    return order, per_rank


def rank_messages(case, layout, tensors, shape, options, world):
    """What each of the pool's ranks is sent for one run of the case at its C."""
    cp = case.cp
    order, per_rank = groups_of(cp, layout["ring_degree"])
    thd = options["qkv_format"] == "thd"
    messages = []
    for r in range(world):
        if r >= cp:
            messages.append({"groups": order})
            continue
        index = torch.stack([row["index"][r] for row in layout["rows"]])
        local = {name: torch.stack([t[b, index[b]] for b in range(index.shape[0])])
                 for name, t in tensors.items()}
        meta = {
            "cp_rank": r, "cp_size": cp, "layout": case.layout, "index": index,
            "valid": _rows(layout, index, "real"),
            "positions": _rows(layout, index, "positions"),
            "position_ids": _rows(layout, index, "position_ids"),
            "spans": _rows(layout, index, "spans"),
            "doc_ids": _rows(layout, index, "doc_ids"),
            "softmax_scale": 1.0 / math.sqrt(shape.head_dim), "mask": layout["mask"],
            "padded_seq_len": layout["padded_len"], "heads": shape.heads,
            "kv_heads": shape.kv_heads, "algo": options["algo"],
        }
        row0 = layout["rows"][0]
        if row0["cu_seqlens"] is not None:
            cu = row0["cu_seqlens"][r]
            meta["cu_seqlens"] = cu
            meta["max_seqlen"] = int((cu[1:] - cu[:-1]).max()) if cu.numel() > 1 else 0
        if row0["varlen"] is not None:
            segments = row0["varlen"][r]
            meta.update(cu_seqlens_q=segments["cu_seqlens_q"],
                        cu_seqlens_k=segments["cu_seqlens_k"], k_slice=segments["k_slice"])
        if thd:
            local = {name: t[0] for name, t in local.items()}
        messages.append({"groups": order, "groups_of_rank": per_rank[r],
                         "inputs": local, "meta": meta, "backward": options["backward"]})
    return messages


def _rows(layout, index, name):
    """[B, l]: the named per-slot fact of each local slot."""
    return torch.stack([row[name][index[b]] for b, row in enumerate(layout["rows"])])


class Run:
    """One run of fn on a case at its C: each rank's results, or why there are none."""

    def __init__(self):
        self.results = None  # per rank: dict of tensors (float64) named as TENSORS, None absent
        self.failure = None  # one line
        self.rank = None
        self.hung = None     # ranks that neither replied nor failed
        self.returned = []   # the ranks that replied, when others hung
        self.waiting = []    # of the hung ranks, those waiting inside torch.distributed
        self.where = {}      # hung rank -> its innermost frame of the user's code
        self.fn_seconds = 0.0


def run_on_ranks(pool, case, layout, tensors, shape, options):
    run = Run()
    messages = rank_messages(case, layout, tensors, shape, options, pool.world)
    replies, stuck = pool.run(messages, options["rank_timeout"])
    for rank, reply in enumerate(replies[:case.cp]):
        if reply is None:
            continue
        kind = reply[0]
        if kind == "raised":
            run.failure, run.rank = f"fn raised in {reply[1]} on rank {rank}: {reply[2]}", rank
            return run
        if kind in ("contract", "died", "internal"):
            run.failure, run.rank = f"rank {rank}: {reply[1]}", rank
            if kind == "internal":
                raise Error(" ".join(f"cplab's rank process failed: {reply[1]}".split()),
                            kind="internal")
            return run
    if stuck:
        stuck = [r for r in stuck if r < case.cp] or stuck
        # A rank inside torch.distributed waits for another; one outside it is where fn hangs.
        hung = [r for r in stuck if not pool.stacks.get(r, (False, ""))[0]]
        run.hung = hung + [r for r in stuck if r not in hung]
        run.waiting = [r for r in stuck if r not in hung]
        run.where = {r: pool.stacks[r][1] for r in stuck if r in pool.stacks}
        run.returned = [r for r in range(case.cp) if replies[r] is not None]
        return run
    thd = options["qkv_format"] == "thd"
    run.results = []
    for reply in replies[:case.cp]:
        _, out, lse, dq, dk, dv, seconds = reply
        got = {"out": out, "lse": lse, "dq": dq, "dk": dk, "dv": dv}
        if thd:
            got = {n: (None if t is None else t.unsqueeze(0)) for n, t in got.items()}
        run.results.append({n: (None if t is None else t.to(torch.float64))
                            for n, t in got.items()})
        run.fn_seconds = max(run.fn_seconds, seconds)
    return run


class Errors:
    """Per tensor, the largest error over the real slots of every rank and the largest exact
    value, and per rank its errors by slot (the largest over heads and dims), to find the first
    global slot past a bound."""

    def __init__(self):
        self.worst = {}   # name -> largest error
        self.scale = {}   # name -> max |exact|
        self.by_slot = {}  # name -> [(rank, index [B, l], errors [B, l], worst head [B, l])]

    def add(self, name, rank, index, got, want, valid):
        """got, want [B, l, H(, d)] float64; valid [B, l] bool."""
        mask = valid.view(*valid.shape, *[1] * (want.dim() - 2)).expand_as(want)
        self.scale[name] = max(self.scale.get(name, 0.0),
                               float(want[mask].abs().max()) if mask.any() else 0.0)
        diff = torch.nan_to_num((got - want).abs(), nan=math.inf)  # NaN: worse than any bound
        diff = torch.where(mask, diff, torch.zeros_like(diff))
        if diff.dim() > 3:
            diff = diff.amax(dim=-1)
        per_slot, head = diff.max(dim=2)
        self.by_slot.setdefault(name, []).append((rank, index, per_slot, head))
        top = float(per_slot.max()) if per_slot.numel() else 0.0
        self.worst[name] = max(self.worst.get(name, 0.0), top)

    def first_past(self, name, limit):
        """(rank, row, local slot, head, error) of the lowest global slot whose error passes
        `limit` (the first wrong query or key in row order)."""
        best = None
        for rank, index, per_slot, head in self.by_slot.get(name, []):
            for b, k in (per_slot > limit).nonzero().tolist():
                key = (b, int(index[b, k]))
                if best is None or key < best[0]:
                    best = (key, (rank, b, k, int(head[b, k]), float(per_slot[b, k])))
        return None if best is None else best[1]


def measure(run, layout, exact, options):
    """The errors of a run against the exact results (dq, dk, dv only with backward), and the
    first pad-row violation under pad_rows='zero' as a line, or ''."""
    errors = Errors()
    pad_problem = ""
    names = TENSORS if options["backward"] else ("out", "lse")
    for r, got in enumerate(run.results):
        index = torch.stack([row["index"][r] for row in layout["rows"]])
        valid = torch.stack([row["real"][index[b]] for b, row in enumerate(layout["rows"])])
        for name in names:
            want = _local(exact[name], index)
            if got[name] is None:
                if name == "lse":
                    continue
                got[name] = torch.zeros_like(want)  # a shard fn never read: its grad is zero
            errors.add(name, r, index, got[name], want, valid)
            if options["pad_rows"] == "zero" and name != "lse" and not pad_problem:
                pad = ~valid
                nonzero = (got[name] != 0).reshape(*pad.shape, -1).any(-1) & pad
                if bool(nonzero.any()):
                    b, k = nonzero.nonzero()[0].tolist()
                    pad_problem = (f"rank {r} {name} is not zero at padding slot {k} of row {b} "
                                   f"(global slot {int(index[b, k])}; pad_rows='zero')")
    return errors, pad_problem


def _local(tensor, index):
    return torch.stack([tensor[b, index[b]] for b in range(index.shape[0])])


def bound(name, calibrated, scale, dtype, cp):
    floor = FLOOR_SHARE * scale
    if name in ("dk", "dv"):
        floor += cp * UNIT_ROUNDOFF[dtype] * scale
    return CALIBRATION_FACTOR * calibrated + floor


LOCATION_WORD = {"out": "query", "lse": "query", "dq": "query", "dk": "key", "dv": "key"}


def check_rank_timeout(rank_timeout):
    """check_loss's, check_attention's and check_logprobs's bound on a rank's wait."""
    if not isinstance(rank_timeout, (int, float)) or isinstance(rank_timeout, bool) or not (
            0 < rank_timeout <= 3600):
        raise Error(f"rank_timeout must be a number of seconds in (0, 3600], got {rank_timeout!r}")


class Options:
    """check_attention's keywords, checked once."""

    def __init__(self, fn_name, algo, dtype, backward, qkv_format, pad_rows, rank_timeout):
        self.fn_name = fn_name
        if algo is not None and not isinstance(algo, str):  # the driver checks the name
            raise Error(f"algo must be None or an attention algorithm's name, got {algo!r}")
        if dtype not in UNIT_ROUNDOFF:
            raise Error(f"dtype must be torch.float32, torch.bfloat16 or torch.float16, got "
                        f"{dtype!r}")
        if not isinstance(backward, bool):
            raise Error(f"backward must be True or False, got {backward!r}")
        if qkv_format not in ("bshd", "thd"):
            raise Error(f"qkv_format must be 'bshd' or 'thd', got {qkv_format!r}")
        if pad_rows not in ("ignore", "zero"):
            raise Error(f"pad_rows must be 'ignore' or 'zero', got {pad_rows!r}")
        check_rank_timeout(rank_timeout)
        self.values = dict(algo=algo, dtype=dtype, backward=backward, qkv_format=qkv_format,
                           pad_rows=pad_rows, rank_timeout=float(rank_timeout))

    def __getitem__(self, name):
        return self.values[name]

    def replay_keywords(self):
        defaults = dict(algo=None, dtype=torch.float32, backward=True, qkv_format="bshd",
                        pad_rows="ignore")
        return {k: v for k, v in self.values.items() if k in defaults and v != defaults[k]}


class Outcome:
    """One case's verdict (check_attention's and check_logprobs's): reason '' when it held."""

    def __init__(self, line):
        self.line, self.reason, self.rank, self.tensor = line, "", None, None
        self.headline = line
        self.seconds = {"fn": 0.0, "reference": 0.0, "total": 0.0}


def _size(error):
    return f"{error:.3g}" if math.isfinite(error) else "not finite (NaN or inf)"


def _where(name, rank, b, k, head, layout):
    """'query slot 9 (row 0, position 4, document 2 from slot 5, local slot 3), head 1': the
    global slot, and where its document starts (a query sees keys of that document only)."""
    row = layout["rows"][b]
    g = int(row["index"][rank][k])
    doc = int(row["doc_ids"][g])
    start = g
    while start > 0 and int(row["doc_ids"][start - 1]) == doc:
        start -= 1
    return (f"{LOCATION_WORD[name]} slot {g} (row {b}, position {int(row['positions'][g])}, "
            f"document {doc} from slot {start}, local slot {k}), head {head}")


def _measured_run(pool, case, inputs, shape, options, line, outcome):
    """fn on the case at its C against the exact attention: (layout, errors, padding problem),
    or None with the outcome's reason set when a rank failed."""
    layout = case.attention_layout()
    tensors = inputs.on(layout)
    clock = time.perf_counter()
    exact = reference(case, tensors, shape)
    outcome.seconds["reference"] += time.perf_counter() - clock
    run = _run_or_hang(pool, case, layout, tensors, shape, options, line)
    outcome.seconds["fn"] += run.fn_seconds
    if run.failure:
        outcome.reason, outcome.rank = run.failure, run.rank
        return None
    errors, pad_problem = measure(run, layout, exact, options)
    return layout, errors, pad_problem


def evaluate(pool, line, options):
    """Runs fn on one case at its C and at C = 1; returns an Outcome."""
    started = time.perf_counter()
    outcome = Outcome(line)
    case_text, shape = split_line(line)
    case = _cplab._Case(case_text, False)
    outcome.headline = (f"{case.headline} H={shape.heads} H_kv={shape.kv_heads} "
                        f"d={shape.head_dim} scale=1e{shape.scale_exp}")
    if options["qkv_format"] == "thd" and not case.packed:
        raise Error(f"qkv_format='thd' takes packed rows; case {case_text!r} is BSHD")
    inputs = Inputs(case, case.attention_layout(), shape, options["dtype"])
    ran = _measured_run(pool, case, inputs, shape, options, line, outcome)
    if ran is None:
        return _done(outcome, started)
    layout, errors, pad_problem = ran
    calibrated, layout1 = errors, layout
    if case.cp > 1:
        ran = _measured_run(pool, case.at_cp(1), inputs, shape, options, line, outcome)
        if ran is None:
            outcome.reason = f"unsharded (C = 1): {outcome.reason}"
            return _done(outcome, started)
        layout1, calibrated, _ = ran
    units = inputs.units(shape)
    for name in TENSORS:
        if name not in calibrated.worst:
            continue
        e1, scale = calibrated.worst[name], max(calibrated.scale[name], units[name])
        limit = UNSHARDED_SHARE * scale
        if not e1 <= limit:
            rank, b, k, head, error = calibrated.first_past(name, limit)
            outcome.reason = (f"{name} is wrong even unsharded (C = 1): error {_size(error)} at "
                              f"{_where(name, rank, b, k, head, layout1)} is past "
                              f"{UNSHARDED_SHARE:g} of its scale {scale:.3g}")
            outcome.rank, outcome.tensor = 0, name
            return _done(outcome, started)
    for name in TENSORS:
        if name not in errors.worst or name not in calibrated.worst:
            continue
        e1 = calibrated.worst[name]
        scale = max(errors.scale[name], units[name])
        limit = bound(name, e1, scale, options["dtype"], case.cp)
        if not errors.worst[name] <= limit:
            rank, b, k, head, error = errors.first_past(name, limit)
            outcome.reason = (f"rank {rank} {name} error {_size(error)} at "
                              f"{_where(name, rank, b, k, head, layout)} is past its bound "
                              f"{limit:.3g} ({CALIBRATION_FACTOR:g} x {e1:.3g}, the same fn "
                              f"unsharded, + floor; scale {scale:.3g})")
            outcome.rank, outcome.tensor = rank, name
            return _done(outcome, started)
    if pad_problem:
        outcome.reason = pad_problem
        outcome.rank = int(pad_problem.split()[1])
    return _done(outcome, started)


def _done(outcome, started):
    outcome.seconds["total"] = time.perf_counter() - started
    return outcome


class RankHung(Error):
    """A rank neither returned nor failed within rank_timeout: the check ends (not shrunk: every
    shrink step would wait as long again)."""


def _run_or_hang(pool, case, layout, tensors, shape, options, line):
    run = run_on_ranks(pool, case, layout, tensors, shape, options)
    if run.hung:
        first = run.hung[0]
        at = f" at {run.where[first]}" if first in run.where else ""
        if first in run.waiting:
            what = (f"rank {first} waits in a collective{at} that "
                    + (f"ranks {run.returned}, which returned, never joined"
                       if run.returned else "another rank never joined"))
        else:
            what = f"rank {first} hangs in fn{at}"
            if run.waiting:
                what += f" (ranks {run.waiting} wait for it in a collective)"
        raise RankHung(
            f"{options.fn_name} on {case.headline} at C = {case.cp}: {what}: no reply within "
            f"rank_timeout={options['rank_timeout']:g} s (a hang is not shrunk) · case: {line}",
            kind="check_failed", case=line, rank=first)
    return run
