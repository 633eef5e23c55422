"""Multi-token prediction under CP (SPEC §6.1): cplab.shifted_loss(depth=k) and cplab.shift against
a plain torch computation on the unsharded batch, and cplab.testing.check_loss(depths=D) on the
example MTP loss (python/examples/mtp/mtp_loss.py): it holds on every layout, and with torch.roll
in place of the shift it is caught with a shrunk case."""
import functools
import re

import pytest
import torch
import torch.nn.functional as F

import cplab
import layout_kinds
from cplab.testing import check_loss
from mtp_loss import mtp_loss

IGNORE = -100


def depth_targets(labels, doc_lens, k):
    """The label k ahead in the same document, by plain Python over the documents."""
    out = torch.full_like(labels, IGNORE)
    start = 0
    for n in doc_lens:
        for t in range(start, start + n - k):
            out[0, t] = labels[0, t + k]
        start += n
    return out


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_shifted_loss_at_depth_k_is_the_mean_ce_of_the_labels_k_ahead(k):
    doc_lens = [5, 2, 9, 1, 7]
    torch.manual_seed(k)
    labels = torch.randint(0, 11, (1, sum(doc_lens)))
    logits = torch.randn(1, sum(doc_lens), 11)
    want = depth_targets(labels, doc_lens, k)
    got = cplab.shifted_loss(logits, labels, layout=layout_kinds.a_plain_layout(), cp=2,
                             doc_lens=doc_lens, depth=k)
    mean = F.cross_entropy(logits[0], want[0], ignore_index=IGNORE)
    assert got["contributing_total"] == int((want != IGNORE).sum())
    assert got["global_mean"] == pytest.approx(float(mean), rel=1e-5)
    assert sum(got["rank_loss"]) / 2 == pytest.approx(float(mean), rel=1e-5)


def test_depth_one_is_the_next_token_loss_bit_for_bit():
    torch.manual_seed(0)
    logits, labels = torch.randn(2, 12, 7), torch.randint(0, 7, (2, 12))
    layout = layout_kinds.a_plain_layout()
    plain = cplab.shifted_loss(logits, labels, layout=layout, cp=2)
    depth_one = cplab.shifted_loss(logits, labels, layout=layout, cp=2, depth=1)
    assert plain["global_mean"] == depth_one["global_mean"]
    assert torch.equal(plain["grad"], depth_one["grad"])


@pytest.mark.parametrize("layout", layout_kinds.layouts_taking("packed"))
def test_shift_gives_each_rank_the_tokens_k_ahead_in_their_document(layout):
    doc_lens, padded = [6, 1, 10, 3, 12], None
    # Size options small enough that the short row is cut into several pieces.
    small = {"block_size": 1, "chunk_size": 2, "granularity": 1, "ring_degree": 2}
    options = {k: v for k, v in small.items() if k in layout_kinds.options_of(layout)}
    try:
        plan = cplab.plan(layout, 4, doc_lens=doc_lens, **options)
    except cplab.Error:  # the layout takes documents the caller padded (to 2C = 8)
        padded = [8, 8, 16, 8, 16]
        plan = cplab.plan(layout, 4, doc_lens=doc_lens, doc_lens_padded=padded, **options)
    spans = padded or doc_lens  # a document's padding is its own: a shift reaches into it
    ids = torch.arange(100, 100 + sum(spans)).unsqueeze(0)
    for k in (1, 2, 4):
        want = depth_targets(ids, spans, k)[0]
        shards = cplab.shift(ids, k, layout=layout, cp=4, doc_lens=doc_lens,
                             doc_lens_padded=padded, fill=-1, **options)
        for rank, shard in enumerate(shards):
            for local, slot in enumerate(plan["index"][rank].tolist()):
                caller = int(plan["caller_pos"][slot])
                expected = int(want[caller]) if caller >= 0 and want[caller] != IGNORE else -1
                assert int(shard[0, local]) == expected, (layout, k, rank, local, slot)


@pytest.mark.parametrize("layout", layout_kinds.layouts_where(lambda e: not e["cp_off"]))
def test_an_mtp_loss_written_as_automodel_holds_on_every_layout(layout):
    assert check_loss(mtp_loss, layout, cp=[1, 2, 3, 4], depths=3, cases=25, seed=1).cases == 25


def test_torch_roll_in_place_of_the_shift_is_caught_and_shrunk():
    planted = functools.partial(mtp_loss, bug="roll")
    with pytest.raises(cplab.Error) as caught:
        check_loss(planted, layout_kinds.a_plain_layout(), cp=[2, 3], depths=2, cases=200, seed=4)
    error = caught.value
    assert error.kind == "check_failed" and error.key == "loss", str(error)
    assert "replay: cplab.testing.replay_loss(" in str(error) and "depths=2" in str(error)
    assert re.search(r"cases and [1-9]\d* shrinks", str(error)), str(error)
    with pytest.raises(cplab.Error):
        cplab.testing.replay_loss(planted, error.case, depths=2)
    print(f"\nroll: {error}")


def forgets_the_mtp_weight(logits, labels, cp_rank, cp_size, group, *, valid, shift):
    return mtp_loss(logits, labels, cp_rank, cp_size, group, valid=valid, shift=shift,
                    scaling_factor=1.0)


def test_an_mtp_weight_other_than_lambda_over_d_minus_one_is_caught():
    with pytest.raises(cplab.Error, match=r"MTP loss .* should be"):
        check_loss(forgets_the_mtp_weight, layout_kinds.a_plain_layout(), cp=[2], depths=3,
                   cases=30, seed=2)


@pytest.mark.parametrize("depths, factor, message", [
    (0, 0.1, "depths must be an int in"),
    (True, 0.1, "depths must be an int in"),
    (17, 0.1, "depths must be an int in"),
    (2, float("nan"), "mtp_scaling_factor must be a finite number"),
])
def test_bad_depths_are_one_line_errors(depths, factor, message):
    with pytest.raises(cplab.Error, match=message):
        check_loss(mtp_loss, layout_kinds.a_plain_layout(), depths=depths,
                   mtp_scaling_factor=factor, cases=1)


def test_bad_shift_and_depth_arguments_are_one_line_errors():
    ids = torch.arange(8).unsqueeze(0)
    layout = layout_kinds.a_plain_layout()
    with pytest.raises(cplab.Error, match="depth must be at least 1"):
        cplab.shift(ids, 0, layout=layout, cp=2, fill=0)
    for fill, dtype in ((-1, torch.uint8), (-7, torch.bool), (0.5, torch.int64), (1e30, torch.int32)):
        with pytest.raises(cplab.Error, match=re.escape(f"fill={fill:g} is not a")):
            cplab.shift(ids.to(dtype), 1, layout=layout, cp=2, fill=fill)
    # A depth past any stream is every token's fill, never an overflow.
    huge = cplab.shift(ids, 2**63 - 1, layout=layout, cp=2, fill=-1)
    assert all(bool((shard == -1).all()) for shard in huge)
    deep = cplab.shifted_loss(torch.randn(1, 8, 5), ids % 5, layout=layout, cp=2, depth=2**63 - 1)
    assert deep["contributing_total"] == 0 and deep["global_mean"] == 0.0
    with pytest.raises(cplab.Error, match="depth must be at least 1"):
        cplab.shifted_loss(torch.randn(1, 8, 5), ids % 5, layout=layout_kinds.a_plain_layout(),
                           cp=2, depth=-1)


class OpaqueLoss:
    """A loss whose signature inspect cannot read: it is called with the four positional
    arguments alone (at C = 1 its mean is the whole loss)."""
    __signature__ = "opaque"  # inspect.signature raises TypeError on it

    def __call__(self, logits, labels, cp_rank, cp_size):
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE,
                               reduction="sum") / max(int((labels != IGNORE).sum()), 1)


def test_a_loss_without_a_readable_signature_gets_the_four_arguments():
    assert check_loss(OpaqueLoss(), layout_kinds.a_plain_layout(), cp=[1], cases=10,
                      seed=3).cases == 10
