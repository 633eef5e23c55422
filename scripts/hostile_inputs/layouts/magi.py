# magi's own hostile inputs, run by scripts/hostile-inputs (its add, sched, P, ... in scope).
# A million tokens in chunks of K = 512 under ulysses: more blocks than a schedule holds.
sched("magi 1M tokens ulysses blocks", ["--layout", "magi", "--cp", "8", "--seq-len", "1048576", "--algo", "ulysses"],
      2, "more than 4194304 blocks")
# One head at C = 2: every algorithm refused, so --svg has nothing to draw (one line, no crash).
sched("--svg with every algorithm refused", ["--layout", "magi", "--cp", "2", "--seq-len", "64", "--algo", "all",
                                             "--heads", "1", "--svg", P("sched_none.svg")], None)
# One-slot chunks at C = 64 over 8192 tokens: every algorithm's schedule is past the block bound,
# so the attention properties refuse the case before building the (minutes-long) reference.
for prop in ("cp_attention_matches_unsharded", "lse_merge_is_stable"):
    add(f"replay {prop} past the schedule bounds",
        ["replay", "--impl", "sim", "--property", prop, "--no-plan", "magi K=1 cp=64 rows=1 S=8192 seed=1"],
        2, "past cplab's schedule bounds")
