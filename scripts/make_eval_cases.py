#!/usr/bin/env python3
"""Writes the shipped eval datasets (skills/<id>/cases.jsonl) for evals/nightly.yaml.

Deterministic: the same files on every run (no clock, a fixed seed). Every
input satisfies its skill's input_schema; word_stats cases carry the exact
counts word_stats.py computes, so `expected: subset` checks real answers.
Run from anywhere: python3 scripts/make_eval_cases.py
"""
import collections
import json
import os
import random
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = 50

FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Margaret", "Dennis",
         "Radia", "John", "Sophie", "Tim", "Hedy", "Claude"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson", "Hamilton",
        "Ritchie", "Perlman", "Backus", "Wilson", "Berners-Lee", "Lamarr", "Shannon"]
COMPANIES = ["Analytical Engines Ltd", "Compiler Works", "Bletchley Labs", "Mathematisch Centrum",
             "Pipeline Systems", "Apollo Guidance Inc", "Unix Room GmbH"]
CONTACT_TEMPLATES = [
    "Hi, I'm {name} from {company}, reach me at {email} or {phone}.",
    "{name} ({email}) asked for a callback.",
    "Please add {name} to the list. Email: {email}. Phone: {phone}.",
    "Met {name} of {company} at the conference; card says {email}.",
    "From: {name} <{email}>\nSubject: follow-up\n\nCall me on {phone} any time.",
]

SUBJECTS = [("Cannot log in", "account"), ("Charged twice this month", "billing"),
            ("App crashes on export", "bug"), ("Please add dark mode", "feature_request"),
            ("Invoice address is wrong", "billing"), ("Password reset email never arrives", "account"),
            ("Question about your roadmap", "other"), ("Sync loses my edits", "bug")]
BODIES = ["Since this morning the page rejects my password.", "This blocks my whole team.",
          "It happened three times today, each time after the update.", "Not urgent, just wondering.",
          "We have a deadline on Friday, please hurry.", "Screenshots attached."]
TIERS = ["free", "pro", "enterprise"]

WORDS = ["the", "cat", "and", "hat", "sat", "on", "a", "mat", "quick", "brown", "fox", "jumps", "over",
         "lazy", "dog", "it's", "rain", "again"]


def word_stats(text, top):
    # The same computation as skills/word_stats/word_stats.py.
    words = re.findall(r"[\w']+", text.lower())
    common = collections.Counter(words).most_common(top)
    return {"words": len(words), "lines": len(text.splitlines()), "characters": len(text),
            "top_words": [{"word": w, "count": c} for w, c in common]}


def contacts(rng):
    out = []
    for i in range(1, CASES + 1):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        name = f"{first} {last}"
        email = f"{first.lower()}.{last.lower().replace('-', '')}@example.com"
        phone = f"+44 20 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"
        text = rng.choice(CONTACT_TEMPLATES).format(name=name, email=email, phone=phone,
                                                   company=rng.choice(COMPANIES))
        out.append({"id": f"c{i}", "input": {"text": text}, "expected": {"name": name, "email": email},
                    "tags": ["with_phone" if phone in text else "no_phone"]})
    return out


def tickets(rng):
    out = []
    for i in range(1, CASES + 1):
        subject, category = rng.choice(SUBJECTS)
        body = " ".join(rng.sample(BODIES, 2))
        # The prompt names {{input.customer_tier}}, so every case gives one.
        case = {"id": f"t{i}", "input": {"subject": subject, "body": body, "customer_tier": rng.choice(TIERS)},
                "expected": {"category": category}, "tags": [category]}
        out.append(case)
    return out


def word_cases(rng):
    out = []
    for i in range(1, CASES + 1):
        lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 4))]
        text = "\n".join(lines).capitalize() + ("." if i % 3 else "")
        top = rng.randint(0, 3)
        out.append({"id": f"w{i}", "input": {"text": text, "top": top}, "expected": word_stats(text, top)})
    return out


def labelled(cases, n=20):
    """The first n triage cases with a support lead's own verdicts (design.md §9.5 "human"), for
    evals/calibration.yaml: a ticket that asks for haste and says it is not urgent in one breath
    has no justified priority, whatever the model picks; everything else is judged fine."""
    out = []
    for case in cases[:n]:
        body = case["input"]["body"]
        mixed = "Not urgent" in body and "please hurry" in body
        human = {"category_fits": "pass", "priority_justified": "fail" if mixed else "pass",
                 "summary_faithful": "pass"}
        out.append(dict(case, human=human))
    return out


def write(skill, cases, name="cases.jsonl"):
    path = os.path.join(ROOT, "skills", skill, name)
    with open(path, "w", encoding="utf-8") as f:
        for case in cases:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"wrote {len(cases)} cases to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    rng = random.Random(7)
    write("extract_contact", contacts(rng))
    triage = tickets(rng)
    write("triage_ticket", triage)
    write("word_stats", word_cases(rng))
    write("triage_ticket", labelled(triage), "labelled.jsonl")
