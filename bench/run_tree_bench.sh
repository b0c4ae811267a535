#!/usr/bin/env bash
# `run` of one skill in a generated tree of N skills (default 2,000) on the
# built-in simulated provider: the first run (a full load, which writes the
# tree's index), the median of 5 runs after it (the index used), and, for
# comparison, the median of 3 full loads (--no-tree-cache): wall time and the
# process's CPU time (user + system).
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

# The runs, timed by Python (wall clock and the child's rusage, in µs).
python3 - "$BIN" "$WORK/tree" "$SKILL" "$INPUT" "$N" <<'PY'
import resource, statistics, subprocess, sys, time
binary, tree, skill, text, n = sys.argv[1:]

def once(*extra):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([binary, "run", skill, "--seed", "1", "--input", text, *extra], cwd=tree, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000, after.ru_maxrss / 1024

def show(label, runs):
    wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    print(f"run {skill}, tree of {n} skills, {label + ':':<42} {wall:7.1f} ms wall, {cpu:6.1f} ms CPU")

cold = [once()]
warm = [once() for _ in range(5)]
show("first run (full load, writes the index)", cold)
show("median of 5 runs with the index", warm)
# (A binary older than the index has no --no-tree-cache: its runs above are all full loads.)
help = subprocess.run([binary, "run", "--help"], capture_output=True, text=True).stdout
if "--no-tree-cache" in help:
    show("median of 3 with --no-tree-cache", [once("--no-tree-cache") for _ in range(3)])
PY
