# thd's own hostile inputs, run by scripts/hostile-inputs (its add, sched, P, ... in scope).
# Every document padded to 2C and cut in chunks r and 2C-1-r: 7000 documents of 16 are 16 runs of
# one slot per document on every ulysses rank, past the block bound when named, listed under all.
tiny_docs = ",".join(["16"] * 7000)
sched("thd 7000 documents of 16 ulysses", ["--layout", "thd", "--cp", "8", "--algo", "ulysses", "--doc-lens", tiny_docs],
      2, "blocks")
sched("thd 7000 documents of 16 all", ["--layout", "thd", "--cp", "8", "--algo", "all", "--doc-lens", tiny_docs], 0)
