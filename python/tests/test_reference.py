"""cplab.layouts, plan, shard, gather and shifted_loss against the spec's worked examples and an
independent computation in torch."""
import pathlib
import re

import pytest
import torch
import torch.nn.functional as F

import cplab

ROOT = pathlib.Path(__file__).resolve().parents[2]


def one_list_of_layouts():
    """The names layouts/layouts.def lists, one CPLAB_LAYOUT(id) line each."""
    text = (ROOT / "layouts" / "layouts.def").read_text()
    return {m.replace("_", "-") for m in re.findall(r"^CPLAB_LAYOUT\((\w+)\)", text, re.M)}


def test_layouts_name_every_layout_with_its_rows_and_options():
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert set(layouts) == one_list_of_layouts()
    assert layouts["thd"]["rows"] == ["packed"]
    assert layouts["head-tail"]["rows"] == ["bshd", "packed"]
    assert {name for name, entry in layouts.items() if entry["cp_off"]} == {"identity"}
    assert layouts["contiguous"]["options"] == ["pad_multiple"]
    assert "chunk_size" in layouts["magi"]["options"]
    assert layouts["usp"]["options"] == ["ring_degree"]
    assert layouts["ptrr"]["options"] == ["block_size"]
    assert layouts["head-tail"]["options"] == []


def test_plan_is_the_spec_worked_example():
    # SPEC §9.1: head-tail, L = 8, C = 2: rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2.
    p = cplab.plan("head-tail", 2, seq_len=8)
    assert p["index"].tolist() == [[0, 1, 6, 7], [2, 3, 4, 5]]
    assert p["positions"].tolist() == [[0, 1, 6, 7], [2, 3, 4, 5]]
    # SPEC §9.3: thd, documents 5, 3, 8 on C = 2: each padded to a multiple of 4.
    t = cplab.plan("thd", 2, doc_lens=[5, 3, 8])
    assert t["padded_seq_len"] == 20
    assert [c.tolist() for c in t["cu_seqlens"]] == [[0, 4, 6, 10]] * 2
    assert t["index"][0].tolist() == [0, 1, 6, 7, 8, 11, 12, 13, 18, 19]


def _batch(rows=2, seq=7, vocab=11):
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(0, vocab, (rows, seq), generator=g)
    return {"input_ids": ids, "labels": ids.clone(), "valid": torch.ones(rows, seq, dtype=torch.bool)}


@pytest.mark.parametrize("layout,cp", [("head-tail", 3), ("contiguous", 2), ("stripe", 4)])
def test_shard_then_gather_is_the_batch(layout, cp):
    batch = _batch()
    shards = cplab.shard(batch, layout, cp)
    assert len(shards) == cp
    assert all(s["input_ids"].shape == shards[0]["input_ids"].shape for s in shards)
    back = cplab.gather([s["input_ids"] for s in shards], layout, cp, seq_len=7)
    assert torch.equal(back, batch["input_ids"])
    p = cplab.plan(layout, cp, seq_len=7)
    for r, s in enumerate(shards):  # every real slot holds its token, positions before the cut
        real = p["real"][r]
        assert torch.equal(s["input_ids"][:, real], batch["input_ids"][:, p["index"][r][real]])
        assert torch.equal(s["position_ids"][0], p["positions"][r])


def test_shifted_loss_is_hf_shifted_cross_entropy():
    g = torch.Generator().manual_seed(5)
    logits = torch.randn(2, 9, 13, generator=g)
    labels = torch.randint(0, 13, (2, 9), generator=g)
    labels[0, 3] = -100
    out = cplab.shifted_loss(logits, labels, layout="head-tail", cp=2)
    want = F.cross_entropy(logits[:, :-1].reshape(-1, 13), labels[:, 1:].reshape(-1),
                           ignore_index=-100)
    assert out["global_mean"] == pytest.approx(float(want), rel=1e-5)
    assert sum(out["rank_loss"]) / 2 == pytest.approx(float(want), rel=1e-5)
    assert out["contributing_total"] == 2 * 8 - 1
    assert [g.shape for g in out["rank_grad"]] == [torch.Size([2, 6, 13])] * 2


def test_results_are_torch_tensors_the_caller_owns():
    p = cplab.plan("contiguous", 2, seq_len=6)
    index = p["index"]
    index += 1  # writable, and nobody else's: a second plan is unchanged
    assert cplab.plan("contiguous", 2, seq_len=6)["index"].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
