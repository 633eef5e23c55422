"""Layouts picked by what they are, never by name: a generic test asks the registry
(cplab.layouts(): each layout's rows, options and cp_off) for the first layout of a kind, in
name order, or for every layout of a kind."""
import importlib
import os

import cplab

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples", "layouts")


def layouts_where(predicate):
    """The names of every registered layout the predicate holds for, in name order."""
    return [entry["name"] for entry in cplab.layouts() if predicate(entry)]


def first_layout(what, predicate):
    """The first registered layout the predicate holds for; `what` says the kind in the error."""
    found = layouts_where(predicate)
    if not found:
        raise LookupError(f"no registered layout {what}")
    return found[0]


def options_of(layout):
    """The Python keywords of the options the layout declares."""
    return next(e["options"] for e in cplab.layouts() if e["name"] == layout)


def a_plain_layout():
    """The first layout that takes BSHD and packed rows, runs at C > 1 and declares no options."""
    return first_layout("takes BSHD and packed rows, runs at C > 1 and declares no options",
                        lambda e: {"bshd", "packed"} <= set(e["rows"]) and not e["cp_off"]
                        and not e["options"])


def a_packed_only_layout():
    """The first layout that takes packed rows and no BSHD rows, and runs at C > 1."""
    return first_layout("takes packed rows only and runs at C > 1",
                        lambda e: e["rows"] == ["packed"] and not e["cp_off"])


def a_layout_with_option(option):
    """The first layout that declares the option (its Python keyword, e.g. a pad multiple's)."""
    return first_layout(f"declares the option {option}", lambda e: option in e["options"])


def layouts_taking(rows):
    """Every layout that takes rows of this kind ("bshd" or "packed") and runs at C > 1."""
    return layouts_where(lambda e: rows in e["rows"] and not e["cp_off"])


def example_sharder(layout):
    """The layout's example sharder (shard_ID of python/examples/layouts/ID.py, which conftest
    puts on sys.path), or None when it has none."""
    ident = layout.replace("-", "_")
    if not os.path.isfile(os.path.join(EXAMPLES, ident + ".py")):
        return None
    return getattr(importlib.import_module(ident), "shard_" + ident, None)


def a_layout_with_an_example(rows):
    """The first layout that takes rows of this kind, runs at C > 1 and has an example sharder."""
    return first_layout(f"takes {rows} rows, runs at C > 1 and has an example sharder",
                        lambda e: rows in e["rows"] and not e["cp_off"]
                        and example_sharder(e["name"]) is not None)


def layouts_running(algo):
    """Every layout that runs the attention algorithm ("ring", "ulysses", ...) at C > 1."""
    return layouts_where(lambda e: algo in e["algos"] and not e["cp_off"])


def _index(layout, cp, seq_len):
    """The layout's index map of a BSHD row, or None where it cannot lay the row out."""
    try:
        return cplab.plan(layout, cp, seq_len=seq_len)["index"].tolist()
    except cplab.Error:
        return None


def a_zigzag_layout():
    """The first layout that splits a BSHD row zigzag: rank r holds chunks r and 2C-1-r."""
    return first_layout("splits a row zigzag",
                        lambda e: "bshd" in e["rows"] and not e["cp_off"]
                        and _index(e["name"], 2, 8) == [[0, 1, 6, 7], [2, 3, 4, 5]])


def a_contiguous_layout():
    """The first layout that gives rank r the r-th slice of a BSHD row."""
    return first_layout("gives rank r the r-th slice of a row",
                        lambda e: "bshd" in e["rows"] and not e["cp_off"]
                        and _index(e["name"], 2, 8) == [[0, 1, 2, 3], [4, 5, 6, 7]])


def _varlen(layout):
    try:
        return cplab.plan(layout, 2, doc_lens=[4, 4])["varlen"]
    except cplab.Error:
        return None


def a_varlen_segments_layout():
    """The first layout whose ranks attend through varlen segments (cu_seqlens_q/k, k_slice)."""
    return first_layout("attends through varlen segments",
                        lambda e: "packed" in e["rows"] and not e["cp_off"]
                        and _varlen(e["name"]) is not None)
