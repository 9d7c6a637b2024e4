"""An upstream that asks its client for `roots/list` once it is initialized (as
server-everything and server-filesystem do), complains on stderr when the answer is an error,
serves one tool, and exits a second and a half later: the gateway's error for its end must not
read as if that complaint were why (tests/integration/gateway.rs). Plain newline-delimited
JSON-RPC on stdio, standard library only."""

import json
import os
import sys
import threading
import time


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def leave():
    time.sleep(1.5)
    os._exit(3)


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "roots-upstream", "version": "1"},
        }})
    elif method == "notifications/initialized":
        send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
            {"name": "hello", "inputSchema": {"type": "object"}},
        ]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": message["id"],
              "result": {"content": [{"type": "text", "text": "hello"}]}})
    elif "id" in message and method is None and message.get("id") == "roots-1":
        error = message.get("error", {}).get("message", "no error")
        sys.stderr.write(f"Failed to request roots from client: {error}\n")
        sys.stderr.flush()
        threading.Thread(target=leave, daemon=True).start()
    elif "id" in message and method is not None:
        send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
