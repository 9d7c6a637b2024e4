#!/usr/bin/env python3
"""Prints the `rename = [..]` pairs that give every operation of an OpenAPI description a tool
name of at most 64 characters (its operationId in snake case, cut at a word boundary and, when
two would meet, numbered), as `openapi!` takes them. Used by bench/openapi.sh for the whole
GitHub description, whose 25 longest operation ids pass 64 characters in snake case."""
import json
import re
import sys


def snake(text):
    out = []
    for i, c in enumerate(text):
        if c.isascii() and c.isalnum():
            if c.isupper() and i > 0:
                p = text[i - 1]
                nxt = text[i + 1] if i + 1 < len(text) else ""
                if p.islower() or p.isdigit() or (p.isupper() and nxt.islower()):
                    out.append("_")
            out.append(c.lower())
        elif not out or out[-1] != "_":
            out.append("_")
    return "".join(out).strip("_")


doc = json.load(open(sys.argv[1]))
names = set()
long_ids = []
for item in doc["paths"].values():
    for method, op in item.items():
        if isinstance(op, dict) and "operationId" in op:
            name = snake(op["operationId"])
            if len(name) > 64:
                long_ids.append((op["operationId"], name))
            else:
                names.add(name)
pairs = []
for op_id, name in long_ids:
    short = name[:64].rsplit("_", 1)[0]
    candidate, n = short, 2
    while candidate in names:
        candidate = f"{short[:60]}_{n}"
        n += 1
    names.add(candidate)
    pairs.append(f'("{op_id}", "{candidate}")')
print(", ".join(pairs))
