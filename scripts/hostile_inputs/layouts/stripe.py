# stripe's own hostile inputs, run by scripts/hostile-inputs (its add, sched, P, ... in scope).
# At the row limit and at a million tokens, as for a layout of each kind there; stripes of one
# token at a million tokens are more slot ranges than the JSON's bound: --json refused.
for S in [1048576, 16777216]:
    row = ["--seq-len", str(S)]
    sched(f"stripe {S} tokens all", ["--layout", "stripe", "--cp", "8", "--algo", "all"] + row, 0)
    if S == 16777216:
        sched(f"stripe {S} tokens all-gather", ["--layout", "stripe", "--cp", "8", "--algo", "all-gather"] + row,
              2, "buffer slots, above cplab's bound")
    else:
        sched(f"stripe {S} tokens all --json", ["--layout", "stripe", "--cp", "8", "--algo", "all", "--json"] + row,
              2, "slot ranges")
