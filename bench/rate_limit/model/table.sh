#!/usr/bin/env bash
# table.sh: the notes' table. nginx rows: jitter 0.2-0.4 ms (calibrated on the measured burst-0
# rows: 1.09x at c=64, 1.08x at c=256), 7 seeds; PerSecondProvider rows: the unit test's
# parameters (jitter 0.2-1.5 ms), 3 seeds. Median (lost cases, mean 429s per run).
row() { # LABEL ARGS...
  local label=$1; shift
  local line="| $label |"
  for v in "old ra" "old full" "m3 ra" "m3 full" "new full"; do
    set -- "$@"
    read -r impl retry <<<"$v"
    if [ "$impl" = m3 ]; then out=$(LIMITER_NO_MEASURE=1 nice python3 sim.py "$@" --impl new --retry "$retry" 2>&1)
    else out=$(nice python3 sim.py "$@" --impl "$impl" --retry "$retry" 2>&1); fi
    med=$(echo "$out" | tail -1 | awk '{print $5}')
    lost=$(echo "$out" | grep -o 'lost [0-9]*' | awk '{s+=$2} END {print s}')
    n429=$(echo "$out" | grep -o '429s [0-9]*' | awk '{s+=$2} END {printf "%.0f", s/NR}')
    line="$line $med ($lost, $n429) |"
  done
  echo "$line"
}
echo "| scenario | today | A: paced retry-after | B: wall rule | A + B | A + B + measurement |"
echo "|---|---:|---:|---:|---:|---:|"
N="--seeds 7 --jitter 0.2 0.4"
row "nginx burst 0, none, c=64" --burst 0 $N
row "nginx burst 0, 2x, c=64" --burst 0 --rpm 12000 $N
row "nginx burst 20, none, c=64" --burst 20 $N
row "nginx burst 20, 2x, c=64" --burst 20 --rpm 12000 $N
row "nginx burst 0, none, c=256" --burst 0 --conc 256 $N
row "nginx burst 20, none, c=256" --burst 20 --conc 256 $N
row "nginx burst 0, exact, c=64" --burst 0 --rpm 6000 $N
row "fixed 1 s window (unit test), none" --window --seeds 3
row "fixed 1 s window (unit test), 2x" --window --rpm 12000 --seeds 3
row "fixed 1 s window (unit test), 4x" --window --rpm 24000 --seeds 3
