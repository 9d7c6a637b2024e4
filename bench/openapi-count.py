#!/usr/bin/env python3
"""Prints how many tools the stdio MCP server at argv[1] lists (every page of tools/list)."""
import json
import subprocess
import sys

server = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def request(id_, method, params):
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())["result"]


request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "count", "version": "1"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
count, cursor, page = 0, None, 1
while True:
    result = request(page, "tools/list", {"cursor": cursor} if cursor else {})
    count += len(result["tools"])
    cursor = result.get("nextCursor")
    page += 1
    if not cursor:
        break
server.stdin.close()
server.wait(timeout=10)
print(count)
