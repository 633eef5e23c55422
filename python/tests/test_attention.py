"""cplab.attention, cplab.mask_matrix and plan(mask=) against the masks written out here from the
caller's documents (SPEC §13.5) and attention computed by torch's autograd in float64."""
import math

import pytest
import torch

import cplab
from layout_kinds import a_plain_layout, layouts_taking

DOCS = [5, 3, 8, 1]  # a packed row: spans below cross the document boundaries at 5 and 8
MASKS = ["causal", "window:1", "window:3", "chunked:2", "chunked:4", "bidirectional:2-7,12-14"]


def expected_visible(plan, doc_lens, mask):
    """[L, L] bool from the caller's documents: each slot's document and position come from its
    caller position (plan()['caller_pos'], -1 on a slot the layout added), the rule from SPEC
    §13.5's table."""
    caller = plan["caller_pos"].tolist()
    starts = [sum(doc_lens[:i]) for i in range(len(doc_lens))]
    facts = []  # (document, position, caller position) or None for padding
    for c in caller:
        doc = next((i for i, s in enumerate(starts) if s <= c < s + doc_lens[i]), None)
        facts.append(None if c < 0 or doc is None else (doc, c - starts[doc], c))
    family, _, arg = mask.partition(":")
    spans = []
    if family == "bidirectional":
        spans = [tuple(int(x) for x in r.split("-")) for r in arg.split(",")]

    def span_of(c):
        return next((i for i, (b, e) in enumerate(spans) if b <= c < e), None)

    L = len(caller)
    out = torch.zeros(L, L, dtype=torch.bool)
    for g in range(L):
        for j in range(L):
            q, k = facts[g], facts[j]
            if q is None or k is None or q[0] != k[0]:
                continue
            if family == "window":
                seen = q[1] - int(arg) < k[1] <= q[1]
            elif family == "chunked":
                seen = k[1] <= q[1] and k[1] // int(arg) == q[1] // int(arg)
            elif family == "bidirectional":
                s = span_of(q[2])
                seen = k[1] <= q[1] or (s is not None and s == span_of(k[2]))
            else:
                seen = k[1] <= q[1]
            out[g, j] = seen
    return out


def torch_attention(q, k, v, grad_out, visible):
    """Unsharded GQA attention in float64 by autograd: the oracle cplab.attention must match."""
    q, k, v = (t.double().requires_grad_() for t in (q, k, v))
    heads, kv_heads, d = q.shape[2], k.shape[2], q.shape[3]
    kk = k.repeat_interleave(heads // kv_heads, dim=2)
    vv = v.repeat_interleave(heads // kv_heads, dim=2)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, kk) / math.sqrt(d)
    scores = scores.masked_fill(~visible, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)  # -inf where a query sees nothing
    probs = torch.exp(scores - lse.unsqueeze(-1).clamp_min(-1e300)).nan_to_num(0.0)
    out = torch.einsum("bhqk,bkhd->bqhd", probs, vv)
    out.backward(grad_out.double())
    return out, lse.transpose(1, 2), q.grad, k.grad, v.grad


def _plan_or_skip(layout, cp, **row):
    try:
        return cplab.plan(layout, cp, **row)
    except cplab.Error as refused:
        pytest.skip(f"{layout} does not lay out {row} at cp={cp}: {refused}")


@pytest.mark.parametrize("layout", layouts_taking("packed"))
@pytest.mark.parametrize("mask", MASKS)
def test_attention_under_a_mask_is_torchs(layout, mask):
    plan = _plan_or_skip(layout, 2, doc_lens=DOCS)
    L = plan["padded_seq_len"]
    visible = expected_visible(plan, DOCS, mask)
    assert torch.equal(cplab.mask_matrix(layout, 2, doc_lens=DOCS, mask=mask), visible)
    g = torch.Generator().manual_seed(7)
    q = torch.randn(1, L, 4, 3, generator=g)
    k, v = torch.randn(1, L, 2, 3, generator=g), torch.randn(1, L, 2, 3, generator=g)
    grad_out = torch.randn(1, L, 4, 3, generator=g)
    got = cplab.attention(q, k, v, grad_out, layout=layout, cp=2, doc_lens=DOCS, mask=mask)
    out, lse, dq, dk, dv = torch_attention(q, k, v, grad_out, visible)
    assert got["mask"] == mask
    for name, want in [("out", out), ("grad_q", dq), ("grad_k", dk), ("grad_v", dv)]:
        torch.testing.assert_close(got[name].double(), want, rtol=1e-5, atol=1e-5, msg=name)
    torch.testing.assert_close(got["lse"].double(), lse, rtol=1e-5, atol=1e-5)
    # Each rank's work under the mask: the visible pairs of its real queries.
    work = [int(visible[plan["index"][r]].sum()) for r in range(2)]
    assert plan_work(layout, mask) == work


def plan_work(layout, mask):
    return cplab.plan(layout, 2, doc_lens=DOCS, mask=mask)["work"].tolist()


def test_bshd_rows_and_the_default_mask():
    layout = a_plain_layout()
    plan = _plan_or_skip(layout, 3, seq_len=9)
    L = plan["padded_seq_len"]
    visible = expected_visible(plan, [9], "window:4")
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, L, 2, 4, generator=g) for _ in range(3))
    got = cplab.attention(q, k, v, layout=layout, cp=3, seq_len=9, mask="window:4")
    assert set(got) == {"out", "lse", "mask", "padded_seq_len"}  # no backward without grad_out
    out, lse, *_ = torch_attention(q, k, v, torch.zeros_like(q), visible)
    torch.testing.assert_close(got["out"].double(), out, rtol=1e-5, atol=1e-5)
    causal = cplab.attention(q, k, v, layout=layout, cp=3, seq_len=9)
    assert causal["mask"] == "causal"
    assert not torch.allclose(causal["out"], got["out"])  # the window cut keys away
    assert cplab.plan(layout, 3, seq_len=9)["mask"] == "causal"


@pytest.mark.parametrize("call,words", [
    (lambda l: cplab.mask_matrix(l, 2, seq_len=8, mask="sliding:4"), "unknown mask 'sliding:4'"),
    (lambda l: cplab.mask_matrix(l, 2, seq_len=8, mask="window:0"), "window:W"),
    (lambda l: cplab.plan(l, 2, seq_len=8, mask="chunked:0"), "chunked"),
    (lambda l: cplab.mask_matrix(l, 2, seq_len=20000), "at most 16384"),
    (lambda l: cplab.attention(*(torch.zeros(1, 7, 1, 2),) * 3, layout=l, cp=2, seq_len=8),
     "L=8"),
    (lambda l: cplab.attention(torch.zeros(1, 8, 3, 2), torch.zeros(1, 8, 2, 2),
                               torch.zeros(1, 8, 2, 2), layout=l, cp=2, seq_len=8), "H_kv"),
    (lambda l: cplab.attention(*(torch.zeros(1, 8, 1, 2, dtype=torch.int64),) * 3, layout=l,
                               cp=2, seq_len=8), "floating"),
    (lambda l: cplab.attention(torch.zeros(1, 8, 1, 2).index_fill_(1, torch.tensor([3]), math.nan),
                               *(torch.zeros(1, 8, 1, 2),) * 2, layout=l, cp=2, seq_len=8),
     "non-finite"),  # a NaN would pass as a query that sees nothing
    (lambda l: cplab.attention(*(torch.zeros(1, 8, 1, 0),) * 3, layout=l, cp=2, seq_len=8),
     "at least 1"),
    (lambda l: cplab.attention(*(torch.zeros(1, 1 << 17, 1, 1),) * 3, layout=l, cp=2,
                               seq_len=1 << 17), "past"),  # hours of dense attention: refused
])
def test_bad_input_is_one_cplab_error(call, words):
    with pytest.raises(cplab.Error) as err:
        call(a_plain_layout())
    assert words in str(err.value) and "\n" not in str(err.value)
