#!/usr/bin/env python3
"""Atomic read-modify-write instructions a request executes, from a callgrind file recorded
with per-instruction counts (`valgrind --tool=callgrind --dump-instr=yes ...`), by function.

    bench/atomics.py CALLGRIND_FILE REQUESTS [TOP]

An instruction counts when objdump shows it `lock`-prefixed, or as an `xchg` with memory
(implicitly locked). The objects are disassembled from the paths the file names, so run it on
the machine that recorded the file, with the same binaries in place."""
import collections
import re
import subprocess
import sys


def main():
    path, requests = sys.argv[1], float(sys.argv[2])
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    names = {"ob": {}, "fn": {}}

    def name(kind, text):
        # Callgrind names an object or function in full once, then by its number alone.
        match = re.match(r"\((\d+)\)(?:\s+(.*))?", text)
        if not match:
            return text
        if match.group(2):
            names[kind][match.group(1)] = match.group(2)
        return names[kind].get(match.group(1), text)

    executed = collections.Counter()  # (object, address) -> times executed
    function_of = {}
    obj = function = None
    address = 0
    call_line = False
    with open(path) as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.startswith(("ob=", "cob=")):
                current = name("ob", line.split("=", 1)[1])
                if line.startswith("ob="):
                    obj = current
                continue
            if line.startswith(("fn=", "cfn=")):
                current = name("fn", line.split("=", 1)[1])
                if line.startswith("fn="):
                    function = current
                continue
            if line.startswith("calls="):
                call_line = True  # the next cost line is the call's inclusive cost
                continue
            if not line or line[0] not in "0123456789+-*":
                continue
            fields = line.split()
            position = fields[0]
            if position.startswith("0x"):
                address = int(position, 16)
            elif position[0] in "+-":
                address += int(position)
            if call_line:
                call_line = False
                continue
            if len(fields) >= 3:
                executed[(obj, address)] += int(fields[2])
                function_of[(obj, address)] = function

    atomic = {}
    for obj in {o for o, _ in executed if o and o.startswith("/")}:
        listing = subprocess.run(
            ["objdump", "-d", "--no-show-raw-insn", obj], capture_output=True, text=True
        ).stdout
        found = set()
        for row in listing.splitlines():
            match = re.match(r"\s*([0-9a-f]+):\s+(.*)", row)
            if match and (
                match.group(2).startswith("lock ")
                or (match.group(2).startswith("xchg") and "(" in match.group(2))
            ):
                found.add(int(match.group(1), 16))
        atomic[obj] = found

    by_function = collections.Counter()
    for (obj, address), count in executed.items():
        if address in atomic.get(obj, ()):
            by_function[function_of[(obj, address)]] += count
    print(f"atomic instructions a request: {sum(by_function.values()) / requests:.1f}")
    for function, count in by_function.most_common(top):
        print(f"{count / requests:7.2f}  {function[:140]}")


if __name__ == "__main__":
    main()
