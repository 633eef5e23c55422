#!/usr/bin/env python3
"""The worked examples of docs/spec.md §9.9-§9.14, recomputed from the rules of §3.6 and §10.

The layouts of §10 have their reference in C++ (reference/layouts/) and their examples are C++ tests;
this script is a second, independent check of the numbers the spec states, written from the rules
alone. It follows each rule step by step, as plainly as possible, and exits 1 naming the first
example whose numbers differ from the spec's.
"""
import bisect
import sys


def documents(lens):
    """(document index, document start) of every slot of a row of documents."""
    out, start = [], 0
    for i, n in enumerate(lens):
        out += [(i, start)] * n
        start += n
    return out


def doc_causal_work(lens, index):
    """Causal work of each rank (§8): a query sees the keys of its document up to itself."""
    doc = documents(lens)
    return [sum(g - doc[g][1] + 1 for g in ranks) for ranks in index]


def stripe(length, cp, g=1):  # §3.6: stripes of g slots, stripe j to rank j mod C
    return [[x for x in range(length) if (x // g) % cp == r] for r in range(cp)]


def per_doc_head_tail(lens, cp):  # §10.1
    index, start = [[] for _ in range(cp)], 0
    for n in lens:
        if n % (2 * cp):
            raise ValueError(f"document of {n} tokens is not a multiple of 2C={2 * cp}")
        c = n // (2 * cp)
        for r in range(cp):
            tail = 2 * cp - 1 - r
            index[r] += list(range(start + r * c, start + (r + 1) * c))
            index[r] += list(range(start + tail * c, start + (tail + 1) * c))
        start += n
    return index


def document_major(index, lens, cp):  # the per-document bug of §9.4 / §10.1
    flat, start = [], 0
    for n in lens:
        for ranks in index:
            flat += [g for g in ranks if start <= g < start + n]
        start += n
    local = len(flat) // cp
    return [flat[r * local:(r + 1) * local] for r in range(cp)]


def ptrr(lens, block, cp, snake=True):  # §10.2
    length = sum(lens)
    doc = documents(lens)
    blocks = length // block
    if length % block or blocks % cp:
        raise ValueError(f"{blocks} blocks of {block} do not divide over C={cp}")

    def sees(qb, kb):
        return any(doc[q][0] == doc[k][0] and k <= q
                   for q in range(qb * block, (qb + 1) * block)
                   for k in range(kb * block, (kb + 1) * block))

    cost = [sum(sees(qb, kb) for kb in range(blocks)) for qb in range(blocks)]
    order = sorted(range(blocks), key=lambda b: -cost[b])  # stable: ties keep ascending order
    owned = [[] for _ in range(cp)]
    for row in range(blocks // cp):
        part = order[row * cp:(row + 1) * cp]
        if snake and row % 2:
            part.reverse()
        for j, b in enumerate(part):
            owned[j].append(b)
    owned = [sorted(o) for o in owned]
    return cost, order, owned, [sum(cost[b] for b in o) for o in owned]


def llama3_varlen(cu, cp, r, causal=True, extend_keys=True):  # §10.3
    n = cu[-1] // cp
    left = bisect.bisect_left(cu, r * n)
    right = bisect.bisect_left(cu, (r + 1) * n)
    if cu[left] != r * n:
        left -= 1
    q = [x - r * n for x in cu[left:right + 1]]
    q[0], q[-1] = 0, n
    k = list(cu[left:right + 1])
    end = (r + 1) * n if causal and extend_keys else cu[right]
    k[-1] = end
    return q, [x - cu[left] for x in k], (cu[left], end)


def usp(length, ring, ulysses):  # §10.4
    c = length // (2 * ring)
    index = [None] * (ring * ulysses)
    for q in range(ring):
        piece = list(range(q * c, (q + 1) * c)) + list(range((2 * ring - 1 - q) * c, (2 * ring - q) * c))
        part = len(piece) // ulysses
        for u in range(ulysses):
            index[q * ulysses + u] = piece[u * part:(u + 1) * part]
    return index


def ulysses_heads(heads, kv_heads, degree):  # §10.5: query heads and the KV head of each rank
    per_rank = heads // degree
    query = [list(range(u * per_rank, (u + 1) * per_rank)) for u in range(degree)]
    kv = [u * kv_heads // degree for u in range(degree)]
    uses = [sorted({h // (heads // kv_heads) for h in query[u]}) for u in range(degree)]
    return query, kv, uses


def main():
    failures = []

    def expect(example, got, want):
        if got != want:
            failures.append(f"§{example}: got {got}, the spec says {want}")

    s = stripe(16, 4)
    expect("9.9", s, [[0, 4, 8, 12], [1, 5, 9, 13], [2, 6, 10, 14], [3, 7, 11, 15]])
    expect("9.9", doc_causal_work([16], s), [28, 32, 36, 40])
    expect("9.9", stripe(12, 4)[2], [2, 6, 10])
    packed = stripe(8, 2)
    positions = [0, 1, 2, 3, 4, 0, 1, 2]
    expect("9.9", [[positions[g] for g in r] for r in packed], [[0, 2, 4, 1], [1, 3, 0, 2]])
    expect("9.9", doc_causal_work([5, 3], packed), [11, 10])
    wide = stripe(16, 2, 2)
    expect("9.9", wide, [[0, 1, 4, 5, 8, 9, 12, 13], [2, 3, 6, 7, 10, 11, 14, 15]])
    expect("9.9", doc_causal_work([16], wide), [60, 76])
    expect("9.9", stripe(12, 2, 2), [[0, 1, 4, 5, 8, 9], [2, 3, 6, 7, 10, 11]])

    p = per_doc_head_tail([8, 4], 2)
    expect("9.10", p, [[0, 1, 6, 7, 8, 11], [2, 3, 4, 5, 9, 10]])
    expect("9.10", doc_causal_work([8, 4], p), [23, 23])
    p = per_doc_head_tail([4, 12], 2)
    expect("9.10", p, [[0, 3, 4, 5, 6, 13, 14, 15], [1, 2, 7, 8, 9, 10, 11, 12]])
    expect("9.10", doc_causal_work([4, 12], p), [44, 44])
    expect("9.10", doc_causal_work([4, 12], document_major(p, [4, 12], 2)), [26, 62])

    cost, order, owned, load = ptrr([4, 8, 4], 1, 2)
    expect("9.11", cost, [1, 2, 3, 4, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4])
    expect("9.11", order, [11, 10, 9, 8, 3, 7, 15, 2, 6, 14, 1, 5, 13, 0, 4, 12])
    expect("9.11", owned, [[2, 3, 5, 6, 8, 11, 12, 13], [0, 1, 4, 7, 9, 10, 14, 15]])
    expect("9.11", load, [28, 28])
    expect("9.11", ptrr([4, 8, 4], 1, 2, snake=False)[3], [30, 26])

    cu = [0, 7, 13, 20]
    want = [([0, 5], [0, 5], (0, 5)), ([0, 2, 5], [0, 7, 10], (0, 10)),
            ([0, 3, 5], [0, 6, 8], (7, 15)), ([0, 5], [0, 7], (13, 20))]
    for r in range(4):
        expect("9.12", llama3_varlen(cu, 4, r), want[r])
    expect("9.12", llama3_varlen(cu, 4, 2, extend_keys=False), ([0, 3, 5], [0, 6, 13], (7, 20)))
    start, end = llama3_varlen(cu, 4, 2)[2]
    expect("9.12", list(range(start, end)), [7, 8, 9, 10, 11, 12, 13, 14])  # k_local_indices
    expect("9.12", llama3_varlen([0, 5, 10, 12], 3, 1), ([0, 1, 4], [0, 5, 8], (0, 8)))
    expect("9.12", llama3_varlen([0, 5, 10, 12], 3, 2), ([0, 2, 4], [0, 5, 7], (5, 12)))

    u = usp(16, 2, 2)
    expect("9.13", u, [[0, 1, 2, 3], [12, 13, 14, 15], [4, 5, 6, 7], [8, 9, 10, 11]])
    expect("9.13", doc_causal_work([16], u), [10, 58, 26, 42])

    query, kv, uses = ulysses_heads(8, 2, 4)
    expect("9.14", query, [[0, 1], [2, 3], [4, 5], [6, 7]])
    expect("9.14", kv, [0, 0, 1, 1])
    expect("9.14", [[h] for h in kv], uses)

    for failure in failures:
        print(failure, file=sys.stderr)
    if not failures:
        print("docs/spec.md §9.9-§9.14: every number agrees")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
