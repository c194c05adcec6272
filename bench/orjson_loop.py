"""The Python baseline of mf's benchmark: every line of a JSONL file parsed with orjson, the
roles counted (what a script that reads a transcript does at the least). usage: orjson_loop.py FILE"""
import sys

import orjson

roles = {}
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            r = orjson.loads(line).get("role")
            roles[r] = roles.get(r, 0) + 1
print(orjson.dumps(roles).decode())
