"""cplab.check_shards: the engine of `cplab check` on tensors."""
import pytest
import torch

import cplab
from layout_kinds import a_plain_layout

# The check engine's plumbing: any layout that takes packed rows and needs no option.
PLAIN = a_plain_layout()


def _packed_batch():
    ids = torch.arange(100, 116).unsqueeze(0)
    return {"input_ids": ids, "labels": ids.clone(), "seq_lens": torch.tensor([[5, 3, 8]])}


def test_a_moved_token_is_a_difference_with_rank_key_slots_expected_and_got():
    batch = _packed_batch()
    shards = cplab.shard(batch, PLAIN, 2)
    ids = shards[1]["input_ids"]
    ids[0, [0, 1]] = ids[0, [1, 0]]
    result = cplab.check_shards(batch, shards, 2, PLAIN)
    assert not result.ok
    first = result.differences[0]
    assert (first.rank, first.key, first.kind) == (1, "input_ids", "slot")
    assert first.slots == (0, 2)
    assert first.got == list(reversed(first.expected))
    with pytest.raises(cplab.Error) as caught:
        result.raise_for_failure()
    assert caught.value.kind == "check_failed" and caught.value.rank == 1
    assert "\n" not in str(caught.value)


def test_a_missing_key_is_a_difference():
    batch = _packed_batch()
    shards = cplab.shard(batch, PLAIN, 2)
    del shards[0]["labels"]
    result = cplab.check_shards(batch, shards, 2, PLAIN)
    assert [(d.rank, d.key, d.kind) for d in result.differences] == [(0, "labels", "missing_key")]


def test_gathered_output_is_checked():
    batch = _packed_batch()
    gathered = batch["input_ids"].clone()
    gathered[0, 4] = 0
    result = cplab.check_shards(batch, cplab.shard(batch, PLAIN, 2), 2, PLAIN, gathered=gathered)
    assert [d.rank for d in result.differences] == [None]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_float_loss_mask_is_a_loss_weight_cplab_takes(dtype):
    """Megatron's loss_mask is float, and cplab's own generators draw one: cplab.shard and the
    check take it (it was once refused as "must be a bool or integer tensor")."""
    batch = _packed_batch()
    batch["loss_mask"] = (torch.arange(16) % 3 != 0).to(dtype).unsqueeze(0)
    shards = cplab.shard(batch, PLAIN, 2)
    assert shards[0]["loss_mask"].dtype == dtype
    assert cplab.check_shards(batch, shards, 2, PLAIN).ok
    shards[1]["loss_mask"][0, 0] = 0.5
    result = cplab.check_shards(batch, shards, 2, PLAIN)
    assert [(d.rank, d.key) for d in result.differences] == [(1, "loss_mask")]
