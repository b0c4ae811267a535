#!/usr/bin/env bash
# sweep.sh EXTRA_ARGS...: median of 5 seeds for each scenario, old and new limiter
for args in "--burst 0" "--burst 20" "--burst 0 --rpm 12000" "--burst 20 --rpm 12000" "--burst 0 --conc 256" "--burst 20 --conc 256" "--burst 100" "--burst 20 --start-spread 50" "--burst 0 --start-spread 30"; do
  for impl in old new; do
    out=$(nice python3 sim.py $args --seeds 5 --jitter 0.2 0.6 --impl $impl "$@" 2>&1)
    echo "$args [$impl $*]: $(echo "$out" | tail -1) lost=$(echo "$out" | grep -o 'lost [0-9]*' | awk '{s+=$2} END {print s}') 429s=$(echo "$out" | grep -o '429s [0-9]*' | awk '{s+=$2} END {print s/NR}')"
  done
done
