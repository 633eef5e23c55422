# CI's stages and their time budgets, sourced by .ci/run.
#   stage NAME SECONDS COMMAND...   runs COMMAND (a command, or an exported shell function, in
#                                   a child bash with -e and pipefail); fails the run when it
#                                   fails, or when it took longer than SECONDS plus the compile
#                                   allowance below
#   stages_done SECONDS             prints the table and the total; fails past SECONDS
# A budget is for a warm compiler cache (CI's clone hits the objects this machine built before,
# scripts/build's CCACHE_BASEDIR). A compile that misses the cache is not a slow test: each one adds
# CI_MISS_SECONDS (default 8, a translation unit's compile on 2 cores) to its stage's budget, so a
# cold cache lengthens the run without failing it, and the guard still catches a slow check.
CI_MISS_SECONDS=${CI_MISS_SECONDS:-8}
_ci_start=$(date +%s)
_ci_rows=()
_ci_missed_total=0

# "MISSES HITS": the compiler cache's counters so far (0 0 without ccache).
_ci_cache() {
  command -v ccache >/dev/null 2>&1 || { echo "0 0"; return; }
  ccache --print-stats 2>/dev/null | awk -F'\t' '
    $1 == "cache_miss" { miss = $2 }
    $1 == "direct_cache_hit" || $1 == "preprocessed_cache_hit" { hit += $2 }
    END { print miss + 0, hit + 0 }'
}

_ci_table() {
  echo "ci: stage               seconds   budget   cache misses   cache hits"
  local row
  for row in "${_ci_rows[@]}"; do echo "ci: $row"; done
  echo "ci: total $(( $(date +%s) - _ci_start ))s"
}

stage() {
  local name=$1 budget=$2
  shift 2
  local start rc=0 misses0 hits0 misses1 hits1
  start=$(date +%s)
  read -r misses0 hits0 < <(_ci_cache)
  echo "ci: ---- $name (budget ${budget}s with a warm cache)"
  # In a child bash with errexit and pipefail: a step of a shell function that fails, fails the
  # stage (here, in a function called left of ||, bash would ignore -e and go on to the next step).
  # Functions a stage runs are exported (export -f) for the child to see.
  bash -eo pipefail -c '"$@"' "$name" "$@" || rc=$?
  local took=$(( $(date +%s) - start ))
  read -r misses1 hits1 < <(_ci_cache)
  local missed=$(( misses1 - misses0 )) hit=$(( hits1 - hits0 ))
  local allowed=$(( budget + missed * CI_MISS_SECONDS ))
  _ci_missed_total=$(( _ci_missed_total + missed ))
  _ci_rows+=("$(printf '%-20s %8s %8s %14s %12s' "$name" "$took" "$allowed" "$missed" "$hit")")
  echo "ci: $name took ${took}s (budget ${allowed}s; compiles: $hit hit the cache, $missed missed)"
  if (( rc != 0 )); then
    _ci_table
    echo "ci: stage '$name' failed (exit $rc)" >&2
    exit "$rc"
  fi
  if (( took > allowed )); then
    _ci_table
    echo "ci: stage '$name' took ${took}s, over its budget of ${allowed}s: find its slow step above" >&2
    exit 1
  fi
}

stages_done() {
  local budget=$1 total=$(( $(date +%s) - _ci_start ))
  _ci_table
  local allowed=$(( budget + _ci_missed_total * CI_MISS_SECONDS ))
  if (( total > allowed )); then
    echo "ci: the whole run took ${total}s, over its budget of ${allowed}s" >&2
    exit 1
  fi
}
