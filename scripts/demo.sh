#!/usr/bin/env bash
# The main job on the embedded default: no key, no network. Sets everything up
# (scripts/setup.sh), then checks and lists the shipped skills and runs them
# on the `simulated` provider.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
SR="$ROOT/build/skillrunner"
export SKILLRUNNER_PROVIDER=simulated

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2" >&2; }

step "Check every skill, rubric and the config" "skillrunner validate"
"$SR" validate

step "List the skills" "skillrunner list"
"$SR" list

step "A gated LLM skill whose gate is the LLM_REVIEW skill review_contact: its first output fails the review's required criterion (scripted in skillrunner.yaml), it regenerates once with the critique, the second review passes; both reviews are in the result" \
  "skillrunner run extract_contact --input '{\"text\": ...}' --pretty"
"$SR" run extract_contact --pretty \
  --input '{"text": "Hi, I am Ada Lovelace (ada@engines.example, +44 20 7946 0018) from Analytical Engines Ltd."}'

step "A validation-loop model whose first answer is fenced and has a wrong type: the retry fixes it" \
  "skillrunner run triage_ticket --input '{...}' --pretty   # faults scripted in skillrunner.yaml"
"$SR" run triage_ticket --pretty \
  --input '{"subject": "Cannot log in", "body": "Since this morning the login page rejects my password.", "customer_tier": "pro"}'

step "Business rules beyond the schema: route_incident's Python validator (skills/route_incident/rules.py) rejects a sev1 that does not page on-call; the fresh retry names the pointer and the model fixes it" \
  "skillrunner run route_incident --input '{\"report\": \"All API calls return 503.\", ...}' --pretty"
"$SR" run route_incident --pretty \
  --input '{"report": "All API calls return 503.", "service": "payments"}'

step "See what was sent: --show-request adds each attempt's request (messages, response format), here the retry's feedback" \
  "skillrunner run triage_ticket --input '{...}' --show-request --pretty"
"$SR" run triage_ticket --pretty --show-request \
  --input '{"subject": "Cannot log in", "body": "Since this morning the login page rejects my password."}'

step "A rubric judge on its own: one verdict per criterion, aggregated in code" \
  "skillrunner run review_contact --input '{\"subject\": {...}, \"context\": \"...\"}' --pretty"
"$SR" run review_contact --pretty \
  --input '{"subject": {"name": "Ada Lovelace", "email": "ada@engines.example"}, "context": "Ada Lovelace, ada@engines.example"}'

step "Run a handler skill (a program fed JSON on stdin)" \
  "skillrunner run word_stats --input '{\"text\": ...}' --pretty"
"$SR" run word_stats --pretty \
  --input '{"text": "The quick brown fox jumps over the lazy dog.\nThe dog sleeps.", "top": 2}'

step "Bad input is refused before any work, with a JSON pointer per error (exit 2)" \
  "skillrunner run word_stats --input '{\"text\": 42}'"
set +e
"$SR" run word_stats --pretty --input '{"text": 42, "top": -1}'
status=$?
set -e
echo "exit status: $status" >&2

SOCK="$(mktemp -d)/skillrunner.sock"
step "The JSON-lines socket: serve in the background, call it, stop it with SIGTERM (it drains, then removes the socket)" \
  "skillrunner serve --socket $SOCK &  skillrunner call skills.invoke '{...}' --socket $SOCK"
"$SR" serve --socket "$SOCK" &
SERVE_PID=$!
trap 'kill -TERM "$SERVE_PID" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
"$SR" call health --socket "$SOCK"
"$SR" call skills.invoke '{"skill": "triage_ticket", "input": {"subject": "Refund", "body": "I was charged twice.", "customer_tier": "free"}}' --socket "$SOCK"
kill -TERM "$SERVE_PID"
wait "$SERVE_PID"
trap - EXIT
echo "server exit status: $?; socket file left: $([ -e "$SOCK" ] && echo yes || echo no)" >&2

OUT="$(mktemp -d)/nightly"
step "A nightly eval run: 3 skills x 50 cases on the simulated provider (with its scripted faults), judged by rubrics, checked against expected values; results, reports and a history row in a temp folder" \
  "skillrunner eval evals/nightly.yaml --out $OUT"
set +e
"$SR" eval evals/nightly.yaml --out "$OUT"
status=$?
set -e
echo "exit status: $status (0 every threshold held, 1 breached, 2 run error)" >&2
echo "open the report: $OUT/report.html" >&2

CAL="$(dirname "$OUT")/calibration"
step "Is the judge any good? 20 triage tickets a support lead also judged (skills/triage_ticket/labelled.jsonl): each criterion's agreement with the lead, Cohen's kappa and confusion counts; below min_judge_kappa a criterion is uncalibrated and left out of the gates (the simulated judge passes everything, so here all three are)" \
  "skillrunner eval evals/calibration.yaml --out $CAL"
set +e
"$SR" eval evals/calibration.yaml --out "$CAL" >/dev/null
set -e
python3 - "$CAL/summary.json" <<'PY'
import json, sys
criteria = json.load(open(sys.argv[1]))["skills"]["triage_ticket"]["criteria"]
for name, c in criteria.items():
    cal = c.get("calibration", {})
    print(f"  {name}: agreement {cal.get('agreement')}, kappa {cal.get('kappa')}, "
          f"confusion {cal.get('confusion')}, {'uncalibrated' if c.get('uncalibrated') else 'calibrated'}")
PY
echo "open the report: $CAL/report.html" >&2
