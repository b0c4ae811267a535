#!/usr/bin/env bash
# `run` of one skill in a generated tree of N skills (default 2,000) on the
# built-in simulated provider: the first run (a full load, which writes the
# tree's index), the median of 5 runs after it (the index used), and, for
# comparison, the median of 3 full loads (--no-tree-cache). Wall time and
# peak RSS of the process.
#   bench/run_tree_bench.sh [N]     (BIN=path/to/skillrunner)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${BIN:-$ROOT/build/skillrunner}"
N="${1:-2000}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$ROOT/bench/make_skill_tree.sh" "$WORK/tree" "$N"
sleep 1  # files written in the clock tick a run starts in are never indexed
export XDG_CACHE_HOME="$WORK/cache"
SKILL=s7; [ "$N" -gt 7 ] || SKILL=s0
INPUT='{"subject": "Site down", "body": "Every page answers 502 since 09:00."}'

# One run of $SKILL: "<wall ms> <CPU ms> <max RSS MB>" (the run must succeed).
once() {
  local start end cpu rss
  start=$(date +%s%N)
  (cd "$WORK/tree" && /usr/bin/time -o "$WORK/time" -f "%U %S %M" "$BIN" run "$SKILL" --seed 1 --input "$INPUT" "$@" >/dev/null)
  end=$(date +%s%N)
  read -r cpu rss < <(awk '{printf "%d %d\n", ($1 + $2) * 1000, $3 / 1024}' "$WORK/time")
  echo "$(( (end - start) / 1000000 )) $cpu $rss"
}
# "<wall> ms wall, <cpu> ms CPU, <rss> MB": the median of each column.
summary() {
  local runs="$1"
  echo "$(echo "$runs" | cut -d' ' -f1 | median) ms wall, $(echo "$runs" | cut -d' ' -f2 | median) ms CPU, $(echo "$runs" | cut -d' ' -f3 | median) MB"
}
median() { sort -n | awk '{a[NR]=$0} END {print a[int((NR + 1) / 2)]}'; }

cold=$(once)
warm=$(for _ in 1 2 3 4 5; do once; done)
full=$(for _ in 1 2 3; do once --no-tree-cache; done)
echo "run $SKILL, tree of $N skills, first run (full load, writes the index): $(summary "$cold")"
echo "run $SKILL, tree of $N skills, median of 5 runs with the index:        $(summary "$warm")"
echo "run $SKILL, tree of $N skills, median of 3 with --no-tree-cache:       $(summary "$full")"
