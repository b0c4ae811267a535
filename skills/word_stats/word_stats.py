"""word_stats: reads {"text", "top"?} as JSON on stdin, prints counts as JSON."""
import collections
import json
import re
import sys

request = json.load(sys.stdin)
text = request["text"]
words = re.findall(r"[\w']+", text.lower())
top = collections.Counter(words).most_common(request.get("top", 3))
json.dump({
    "words": len(words),
    "lines": len(text.splitlines()),
    "characters": len(text),
    "top_words": [{"word": w, "count": c} for w, c in top],
}, sys.stdout)
