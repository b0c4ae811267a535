"""route_incident's business rule: whether to page follows from the severity.

Reads the answer (one JSON object) on stdin and prints a JSON list of
rejections, each {"path": JSON pointer, "message": text}; [] accepts it.
"""
import json
import sys

PAGES = {"sev1": True, "sev2": True, "sev3": None, "sev4": False}


def rejections(answer):
    severity = answer["severity"]
    expected = PAGES[severity]
    if expected is not None and answer["page_oncall"] != expected:
        verb = "must page" if expected else "never pages"
        return [{"path": "/page_oncall", "message": f"a {severity} incident {verb} on-call"}]
    return []


if __name__ == "__main__":
    json.dump(rejections(json.load(sys.stdin)), sys.stdout)
    print()
