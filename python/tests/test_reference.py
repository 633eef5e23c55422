"""cplab.layouts, shard, gather and shifted_loss for every layout, against the one list and an
independent computation in torch (each layout's worked examples: layouts/ID_test.py)."""
import pathlib
import re

import pytest
import torch
import torch.nn.functional as F

import cplab
from layout_kinds import layouts_taking

ROOT = pathlib.Path(__file__).resolve().parents[2]


def one_list_of_layouts():
    """The names core/layouts.def lists, one CPLAB_LAYOUT(id) line each."""
    text = (ROOT / "core" / "layouts.def").read_text()
    return {m.replace("_", "-") for m in re.findall(r"^CPLAB_LAYOUT\((\w+)\)", text, re.M)}


def test_layouts_name_every_layout_with_its_rows_and_options():
    # Each layout's own entry is checked in its test file (layouts/ID_test.py).
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert set(layouts) == one_list_of_layouts()
    for entry in layouts.values():
        assert entry["rows"] and set(entry["rows"]) <= {"bshd", "packed"}
        assert isinstance(entry["cp_off"], bool)
        assert len(set(entry["options"])) == len(entry["options"])


def _batch(rows=2, seq=7, vocab=11):
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, vocab, (rows, seq), generator=g)
    return {"input_ids": ids, "labels": ids.clone(), "valid": torch.ones(rows, seq, dtype=torch.bool)}


def _round_trips():
    """Every layout that takes BSHD rows at C > 1, at C = 2, 3 and 4."""
    return [(layout, cp) for layout in layouts_taking("bshd") for cp in (2, 3, 4)]


def _lays_out(layout, cp, seq_len):
    """Skips a layout that refuses the row at this C (its plan says so, e.g. blocks that do not
    divide over C); every other one must round-trip."""
    try:
        return cplab.plan(layout, cp, seq_len=seq_len)
    except cplab.Error as refused:
        pytest.skip(f"{layout} does not lay out S={seq_len} at cp={cp}: {refused}")


@pytest.mark.parametrize("layout,cp", _round_trips())
def test_shard_then_gather_is_the_batch(layout, cp):
    p = _lays_out(layout, cp, 7)
    batch = _batch()
    shards = cplab.shard(batch, layout, cp)
    assert len(shards) == cp
    assert all(s["input_ids"].shape == shards[0]["input_ids"].shape for s in shards)
    back = cplab.gather([s["input_ids"] for s in shards], layout, cp, seq_len=7)
    assert torch.equal(back, batch["input_ids"])
    for r, s in enumerate(shards):  # every real slot holds its token, positions before the cut
        real = p["real"][r]
        assert torch.equal(s["input_ids"][:, real], batch["input_ids"][:, p["index"][r][real]])
        assert torch.equal(s["position_ids"][0], p["positions"][r])


@pytest.mark.parametrize("layout", layouts_taking("bshd"))
def test_shifted_loss_is_hf_shifted_cross_entropy(layout):
    p = _lays_out(layout, 2, 9)
    g = torch.Generator().manual_seed(5)
    logits = torch.randn(2, 9, 13, generator=g)
    labels = torch.randint(0, 13, (2, 9), generator=g)
    labels[0, 3] = -100
    out = cplab.shifted_loss(logits, labels, layout=layout, cp=2)
    want = F.cross_entropy(logits[:, :-1].reshape(-1, 13), labels[:, 1:].reshape(-1),
                           ignore_index=-100)
    assert out["global_mean"] == pytest.approx(float(want), rel=1e-5)
    assert sum(out["rank_loss"]) / 2 == pytest.approx(float(want), rel=1e-5)
    assert out["contributing_total"] == 2 * 8 - 1
    local = p["index"].shape[1]  # each rank's slots under the layout's own plan
    assert [g.shape for g in out["rank_grad"]] == [torch.Size([2, local, 13])] * 2
