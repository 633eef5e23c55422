"""thd: its registry entry, the spec's worked example, what `check --layout auto` names its shards, and the
example THD sharder (python/examples/layouts/thd.py) with one planted bug."""
import pytest
import torch

import cplab
from example_checks import CASES, SEED, shrunk
from thd import shard_thd


def _packed_batch():
    ids = torch.arange(100, 116).unsqueeze(0)
    return {"input_ids": ids, "labels": ids.clone(), "seq_lens": torch.tensor([[5, 3, 8]])}


def test_layouts_name_every_layout_with_its_rows_and_options():
    layouts = {entry["name"]: entry for entry in cplab.layouts()}
    assert layouts["thd"]["rows"] == ["packed"]


def test_plan_is_the_spec_worked_example():
    # SPEC §9.3: thd, documents 5, 3, 8 on C = 2: each padded to a multiple of 4.
    t = cplab.plan("thd", 2, doc_lens=[5, 3, 8])
    assert t["padded_seq_len"] == 20
    assert [c.tolist() for c in t["cu_seqlens"]] == [[0, 4, 6, 10]] * 2
    assert t["index"][0].tolist() == [0, 1, 6, 7, 8, 11, 12, 13, 18, 19]


def test_auto_names_the_layout_of_reference_shards():
    batch = _packed_batch()
    shards = cplab.shard(batch, "thd", 2)
    result = cplab.check_shards(batch, shards, 2)
    assert result.ok and result.auto and result.layout == "thd"
    assert result.conventions["cu_seqlens"] == "local"
    assert "MATCH" in result.report
    result.raise_for_failure()  # nothing to raise


def test_cu_seqlens_as_floats_or_on_one_rank_only_is_a_difference():
    """The tables a layout gives its ranks are integers on every rank: a float table, and one
    rank without it, were once reported as a MATCH."""
    batch = _packed_batch()
    shards = cplab.shard(batch, "thd", 2)
    floats = [dict(s) for s in shards]
    floats[1]["cu_seqlens"] = floats[1]["cu_seqlens"].float()
    result = cplab.check_shards(batch, floats, 2, "thd")
    assert [(d.rank, d.key, d.kind) for d in result.differences] == [(1, "cu_seqlens", "dtype")]
    lacking = [dict(s) for s in shards]
    del lacking[1]["cu_seqlens"]
    result = cplab.check_shards(batch, lacking, 2, "thd")
    assert [(d.rank, d.key, d.kind) for d in result.differences] == [
        (1, "cu_seqlens", "missing_key")]


def test_thd_passes():
    summary = cplab.testing.check_sharder(shard_thd, "thd", pad_id=0, cases=CASES, seed=SEED)
    assert summary.cases == CASES


def test_positions_after_partitioning_are_caught_small():
    def local_positions(batch, cp_rank, cp_size):
        return shard_thd(batch, cp_rank, cp_size, positions_after_cut=True)

    with pytest.raises(cplab.Error) as caught:
        cplab.testing.check_sharder(local_positions, "thd", pad_id=0, cases=CASES, seed=SEED)
    error = shrunk(caught)
    assert error.key == "position_ids"
    assert error.documents <= 2
