"""head-tail: its registry entry, the spec's worked example, its shifted loss, and the example
round-robin sharder (python/examples/layouts/head_tail.py) with one planted bug."""
import pytest
import torch
import torch.nn.functional as F

import cplab
from example_checks import CASES, SEED, shrunk
from head_tail import shard_head_tail


def test_layouts_name_every_layout_with_its_rows_and_options():
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert layouts["head-tail"]["rows"] == ["bshd", "packed"]
    assert layouts["head-tail"]["options"] == []


def test_plan_is_the_spec_worked_example():
    # SPEC §9.1: head-tail, L = 8, C = 2: rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2.
    p = cplab.plan("head-tail", 2, seq_len=8)
    assert p["index"].tolist() == [[0, 1, 6, 7], [2, 3, 4, 5]]
    assert p["positions"].tolist() == [[0, 1, 6, 7], [2, 3, 4, 5]]


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


def test_round_robin_passes():
    summary = cplab.testing.check_sharder(shard_head_tail, "head-tail", rows="bshd", pad_id=0,
                                          cases=CASES, seed=SEED)
    assert summary.cases == CASES


def test_tail_chunk_mirrored_wrong_is_caught_small():
    def mirrored(batch, cp_rank, cp_size):  # the tail chunk 2C - r instead of 2C - 1 - r
        return shard_head_tail(batch, cp_rank, cp_size,
                               tail_chunk=lambda r, c: (2 * c - r) % (2 * c))

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_sharder(mirrored, "head-tail", rows="bshd", pad_id=0, cases=CASES,
                                    seed=SEED)
    error = shrunk(caught)
    assert error.batch["input_ids"].shape[1] <= 8  # S of the shrunk row
    assert error.key in ("input_ids", "labels", "position_ids", "valid")
    with pytest.raises(cplab.Error) as again:  # the replay line fails the same way
        cplab.testing.replay(mirrored, error.case, pad_id=0)
    assert str(again.value).split(" · ")[0] in str(error)


def _shards_without_attention_mask(hole):
    """An Automodel-style head-tail batch whose ranks lost attention_mask, as torch's
    context_parallel leaves them (it shards the token buffers; SDPA runs with is_causal)."""
    ids = torch.arange(1, 17).reshape(1, 16)
    mask = torch.ones(1, 16, dtype=torch.long)
    mask[0, 14:] = 0  # padding at the row's end
    if hole:
        mask[0, 5] = 0  # a token masked inside the real ones: a causal kernel cannot know it
    batch = {"input_ids": ids, "labels": ids.clone(), "attention_mask": mask}
    shards = cplab.shard(batch, "head-tail", 2)
    for shard in shards:
        assert list(shard.pop("extra_tokens")) == ["attention_mask"]
    return batch, shards


def test_shards_that_drop_an_attention_mask_saying_nothing_match():
    batch, shards = _shards_without_attention_mask(hole=False)
    result = cplab.check_shards(batch, shards, 2, "head-tail")
    assert result.ok, result.report
    assert "holds no attention_mask: allowed" in result.report


def test_shards_that_drop_an_attention_mask_with_a_hole_fail_naming_the_key():
    batch, shards = _shards_without_attention_mask(hole=True)
    result = cplab.check_shards(batch, shards, 2, "head-tail")
    assert not result.ok
    assert {(d.key, d.kind) for d in result.differences} == {("attention_mask", "missing_key")}
    assert "slot 5 is masked inside the real tokens" in result.report
