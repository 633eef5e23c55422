#!/usr/bin/env bash
# Ranks as processes, end to end: process_tests.sh TEST CPLAB MPIRUN
#   sim_mpi_sweep              the property suite on sim-mpi, C in 1..4 and C = 3 alone
#   sim_mpi_replay             replay under mpirun: rank 0 prints, a C above the job refused
#   mutants_killed             every mutant's -mpi variant is killed
#   distributed_equals_single  mpirun -np 3 sweep --distribute == a single-process sweep
#   kill_rank                  SIGKILL one rank mid-collective, Open MPI tears the job down
#   kill_rank_no_teardown      the same with the job left running: the others time out, named
#   kill_rank_mid_message      the job left running, rank 1 killed while its large message is on
#                              the way (the others hold its header; the rest never comes)
#   kill_rank_at_start         the job left running, rank 1 killed before its first message (as
#                              the others set up cplab's communicator, which needs every process)
#   kill_rank_in_setup         the same, rank 1 killed right after it said it came, the setup
#                              under way (the others heard it once, then nothing)
#   kill_rank_between_results  the same, rank 1 killed between its sends of a run's result: rank 0
#                              has it and goes on, rank 2 times out and tells rank 0 why
#   refuses_ambiguous          a sweep under mpirun that says neither how to use the processes
set -uo pipefail
test_name=$1 cplab=$2 mpirun=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# report.json is complete and valid: parses, and holds one result per job it announces.
report_is_whole() {
  /usr/bin/env python3 - "$1" <<'PY' || return 1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"].startswith("cplab-sweep-report/"), d["schema"]
assert len(d["results"]) == d["totals"]["jobs"], (len(d["results"]), d["totals"])
PY
}

# The layouts, asked of the cplab under test, never named here: those that lay out a row
# (`layout --layout all`), in name order.
lays_out() {  # lays_out CP ROW-ARGUMENTS...: the layouts that lay out this row at C = CP, a line each
  local cp=$1
  shift
  "$cplab" layout --layout all --cp "$cp" "$@" --json | /usr/bin/env python3 -c '
import json, sys
print("\n".join(e["layout"] for e in json.load(sys.stdin)["layouts"] if "error" not in e))'
}
# The first layout of packed rows only (no BSHD row) that lays out documents 5, 3 and 8 at C = 3.
packed_only() {
  local name
  name=$(grep -vxF -f <(lays_out 1 --seq-len 8) <<<"$(lays_out 3 --doc-lens 5,3,8)" | head -n 1)
  [ -n "$name" ] || fail "no layout of packed rows only lays out documents 5,3,8 at C=3"
  echo "$name"
}
# The layouts that lay out both a BSHD and a packed row at C = 3, a line each.
both_rows() { grep -xF -f <(lays_out 3 --seq-len 24) <<<"$(lays_out 3 --doc-lens 5,3,16)"; }

case $test_name in
sim_mpi_sweep)
  "$mpirun" 4 "$cplab" sweep --impl sim-mpi --cases 50 --seed 12 --out "$tmp/a" >"$tmp/a.log" 2>&1 ||
    { cat "$tmp/a.log"; fail "sim-mpi sweep on 4 processes is not green"; }
  grep -Eq "^green: ([0-9]+) jobs, ([0-9]+) passed, 0 failed, ([0-9]+) skipped" "$tmp/a.log" || { cat "$tmp/a.log"; fail "not every job passed"; }
  report_is_whole "$tmp/a/report.json" || fail "report"
  # Skipped only where a property checks the attention schedule alone (its sim jobs run it).
  /usr/bin/env python3 - "$tmp/a/report.json" <<'PY' || fail "a job was skipped for another reason"
import json, sys
d = json.load(open(sys.argv[1]))
skipped = [r for r in d["results"] if r["status"] == "skipped"]
assert all("checks the attention schedule alone" in r["message"] for r in skipped), skipped[:1]
assert len(skipped) < len(d["results"]) // 2, len(skipped)
PY
  "$mpirun" 3 "$cplab" sweep --impl sim-mpi --cp 3 --cases 20 --seed 13 --out "$tmp/b" >"$tmp/b.log" 2>&1 ||
    { cat "$tmp/b.log"; fail "sim-mpi sweep with C=3 on 3 processes is not green"; }
  # Only rank 0 printed: one summary line.
  [ "$(grep -c '^green:' "$tmp/b.log")" = 1 ] || { cat "$tmp/b.log"; fail "more than one process printed"; }
  ;;
sim_mpi_replay)
  layout=$(packed_only) || exit 1
  "$mpirun" 3 "$cplab" replay --impl sim-mpi "$layout cp=3 docs=5,3,8" >"$tmp/r.log" 2>&1 ||
    { cat "$tmp/r.log"; fail "replay on sim-mpi"; }
  [ "$(grep -Ec '^([0-9]+) of \1 properties hold' "$tmp/r.log")" = 1 ] || { cat "$tmp/r.log"; fail "replay output"; }
  "$mpirun" 2 "$cplab" replay --impl sim-mpi "$layout cp=3 docs=5,3,8" >"$tmp/r2.log" 2>&1 &&
    fail "a C=3 case on 2 processes was not refused"
  grep -q "needs 3 MPI processes" "$tmp/r2.log" || { cat "$tmp/r2.log"; fail "refusal not named"; }
  ;;
mutants_killed)
  "$mpirun" 4 "$cplab" mutants --mpi --json >"$tmp/m.json" 2>"$tmp/m.err" ||
    { cat "$tmp/m.json" "$tmp/m.err"; fail "a mutant survived on sim-mpi"; }
  /usr/bin/env python3 - "$tmp/m.json" <<'PY' || fail "mutants report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["survived"] == 0 and d["killed"] >= 20, (d["killed"], d["survived"])
assert all(m["mutant"].endswith("-mpi") and m["killed"] for m in d["mutants"])
PY
  ;;
distributed_equals_single)
  # Three layouts: of packed rows only, and the first two of both rows.
  packed=$(packed_only) || exit 1
  both=$(both_rows | head -n 2 | paste -sd, -)
  [ "$(tr , '\n' <<<"$both" | grep -c .)" = 2 ] || fail "no two layouts of both rows: '$both'"
  args=(sweep --cases 20 --seed 11 --cp 1,2,3 --layouts "$packed,$both")
  "$cplab" "${args[@]}" --out "$tmp/single" >"$tmp/s.log" 2>&1 || { cat "$tmp/s.log"; fail "single"; }
  "$mpirun" 3 "$cplab" "${args[@]}" --distribute --out "$tmp/dist" >"$tmp/d.log" 2>&1 ||
    { cat "$tmp/d.log"; fail "distributed sweep"; }
  grep -q "3 processes: each runs every n-th job" "$tmp/d.log" || { cat "$tmp/d.log"; fail "mode line"; }
  /usr/bin/env python3 - "$tmp/single/report.json" "$tmp/dist/report.json" <<'PY' || fail "reports differ"
import json, sys
def timeless(x):
    if isinstance(x, dict):
        return {k: timeless(v) for k, v in x.items()
                if k not in ("seconds", "cases_per_second", "share")}
    if isinstance(x, list):
        # Lists ordered by time (by_property, slowest first) compare as sets of their entries.
        items = [timeless(v) for v in x]
        return sorted(items, key=json.dumps) if x and isinstance(x[0], dict) and "share" in x[0] else items
    return x
a, b = (timeless(json.load(open(p))) for p in sys.argv[1:3])
if a != b:
    for k in a:
        if a[k] != b.get(k):
            print("differs:", k, a[k] if k != "results" else "...", b.get(k) if k != "results" else "", file=sys.stderr)
    sys.exit(1)
properties = {r["property"] for r in a["results"]}
assert len(properties) >= 9, properties
assert len(a["results"]) == len(properties) * 3 * 2, len(a["results"])  # x 3 layouts x (sim, gpu)
PY
  ;;
kill_rank | kill_rank_no_teardown | kill_rank_mid_message | kill_rank_at_start | kill_rank_in_setup | kill_rank_between_results)
  if [ "$test_name" != kill_rank ]; then
    # Keep the job running when a process dies: the others must find out by themselves.
    export MPIRUN_FLAGS="--mca orte_abort_on_non_zero_status 0"
  fi
  if [ "$test_name" = kill_rank_mid_message ]; then
    # Its first message of 64 KiB or more: past every eager limit, so its body is read from the
    # sender's memory after the header came (that read once waited forever in MPI_Mrecv).
    export CPLAB_MPI_FAULT_MID_MESSAGE="1 65536"
  elif [ "$test_name" = kill_rank_at_start ]; then
    # Once a blocking MPI_Comm_dup at the first message: the others waited in it forever.
    export CPLAB_MPI_FAULT_AT_START=1
  elif [ "$test_name" = kill_rank_in_setup ]; then
    # Once "no word from ranks none (arrived: 0, 1, 2)": it had come, so nobody was named.
    export CPLAB_MPI_FAULT_IN_SETUP=1
  elif [ "$test_name" = kill_rank_between_results ]; then
    # Once rank 0 waited in the next run and named "ranks 1, 2": rank 2 had left without a word.
    export CPLAB_MPI_FAULT_BETWEEN_RESULTS=1
  else
    export CPLAB_MPI_FAULT="kill 1 400"
  fi
  start=$(date +%s)
  "$mpirun" 3 "$cplab" sweep --impl sim-mpi --cases 50 \
    --seed 2 --rank-timeout-ms 3000 --out "$tmp/k" >"$tmp/k.log" 2>&1 &
  launcher=$!
  # Open MPI 4.1's mpirun, told not to tear the job down, does not return after a process died,
  # even once every other process has ended: wait for its processes, then stop it.
  status="" seen=""
  while [ $(($(date +%s) - start)) -lt 120 ]; do
    if ! kill -0 "$launcher" 2>/dev/null; then
      wait "$launcher"
      status=$?
      break
    fi
    # The job's own processes, not a helper mpirun may start and end on the way.
    if pgrep -P "$launcher" -f "$cplab sweep" >/dev/null; then
      seen=1
    elif [ "$test_name" != kill_rank ] && [ -n "$seen" ]; then
      kill "$launcher"
      wait "$launcher"
      status=1
      break
    fi
    sleep 0.2
  done
  if [ -z "$status" ]; then
    kill -9 "$launcher"
    status=124
  fi
  elapsed=$(($(date +%s) - start))
  cat "$tmp/k.log"
  [ "$status" != 0 ] || fail "the sweep passed although rank 1 was killed"
  [ "$status" != 124 ] || fail "the job hung"
  [ "$elapsed" -lt 120 ] || fail "took ${elapsed}s"
  if [ "$test_name" = kill_rank ]; then
    grep -q "rank 1 .*exited on signal 9" "$tmp/k.log" || fail "rank 1 was not the one killed"
  fi
  if [ "$test_name" = kill_rank ]; then
    # Open MPI stops the survivors (SIGTERM): each says so, with what it was waiting in.
    # (A survivor caught waiting also says in what: "this rank was in all_gather #24 ...".)
    grep -Eq "rank [02]/3: stopped by the launcher \(SIGTERM\)" "$tmp/k.log" ||
      grep -q "no word from rank 1" "$tmp/k.log" || fail "no survivor named its end"
  else
    grep -Eq "no word from rank 1 (within|for more than) [0-9]+ ms" "$tmp/k.log" ||
      fail "the survivors did not name rank 1"
    # Each survivor says so on stderr when it finds out, rank 2 (which prints nothing else) too.
    for survivor in 0 2; do
      grep -Eq "^cplab: error: rank $survivor/[0-9]+: .*no word from ranks? ([0-9]+, )*1([^0-9]|$)" "$tmp/k.log" ||
        fail "rank $survivor did not name rank 1 on stderr"
    done
    if [ "$test_name" = kill_rank_between_results ]; then
      # Rank 2 waits for rank 1 too: rank 0 names rank 1 alone, by rank 2's word or its report.
      grep -Eq "^cplab: error: rank 0/3: .*no word from rank 1 within" "$tmp/k.log" ||
        fail "rank 0 did not name rank 1 alone"
    fi
    report_is_whole "$tmp/k/report.json" || fail "rank 0's report is not whole"
    grep -q "no word from rank 1" "$tmp/k/report.json" || fail "the report does not name rank 1"
    grep -q '"complete": true' "$tmp/k/report.json" || fail "rank 0's report is not complete"
  fi
  # Never half a report: none, or a whole one.
  if [ -e "$tmp/k/report.json" ]; then report_is_whole "$tmp/k/report.json" || fail "half a report"; fi
  ;;
refuses_ambiguous)
  "$mpirun" 2 "$cplab" sweep --cases 1 --out "$tmp/x" >"$tmp/x.log" 2>&1 && fail "plain sweep under mpirun ran"
  grep -q "pass --distribute" "$tmp/x.log" || { cat "$tmp/x.log"; fail "no reason given"; }
  "$mpirun" 2 "$cplab" sweep --cases 1 --impl sim-mpi --distribute --out "$tmp/x" >"$tmp/y.log" 2>&1 &&
    fail "--distribute with sim-mpi ran"
  grep -q "choose one" "$tmp/y.log" || { cat "$tmp/y.log"; fail "no reason given"; }
  "$mpirun" 2 "$cplab" sweep --cases 1 --impl sim-mpi --cp 3 --out "$tmp/x" >"$tmp/z.log" 2>&1 &&
    fail "C=3 on 2 processes ran"
  grep -q "needs 3 MPI processes" "$tmp/z.log" || { cat "$tmp/z.log"; fail "no reason given"; }
  [ ! -e "$tmp/x" ] || fail "a refused sweep wrote reports"
  ;;
*)
  fail "unknown test $test_name"
  ;;
esac
echo "ok: $test_name"
