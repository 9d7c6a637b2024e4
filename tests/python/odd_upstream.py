"""An upstream with odd lists for the gateway tests (tests/integration/gateway.rs): tool names
that are no valid tool names here (a space, an accent, 100 characters), one that becomes
another's once made valid, a tool without an `inputSchema`, one without a name, one whose
input schema is no object, more tools than the test lets the gateway serve, prompts paged one
at a time without end, a URI template that does not parse and two that no URI could tell
apart. Plain newline-delimited JSON-RPC on stdio, no SDK: the point is what a careless server
sends. Answers `tools/call` and `prompts/get` with the name it was called by, and
`resources/read` with the URI."""

import json
import sys

TOOLS = [
    {"name": "read file", "inputSchema": {"type": "object"}},
    {"name": "read_file", "inputSchema": {"type": "object"}},
    {"name": "x" * 100, "inputSchema": {"type": "object"}},
    {"name": "x" * 100 + "y", "inputSchema": {"type": "object"}},
    {"name": "no_schema"},
    {"name": "été", "inputSchema": {"type": "object"}},
    {"description": "no name", "inputSchema": {"type": "object"}},
    {"name": "stringy", "inputSchema": {"type": "string"}},
    {"name": "t9", "inputSchema": {"type": "object"}},
    {"name": "t10", "inputSchema": {"type": "object"}},
    {"name": "t11", "inputSchema": {"type": "object"}},
]
TEMPLATES = [
    {"uriTemplate": "odd://{broken", "name": "broken"},
    {"uriTemplate": "odd://items/{id}", "name": "item"},
    {"uriTemplate": "odd://items/{key}", "name": "same item"},
]


def answer(message, result=None, error=None):
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if error is not None:
        reply["error"] = error
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message or "method" not in message:
        continue
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        answer(message, {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "odd", "version": "1"},
        })
    elif method == "ping":
        answer(message, {})
    elif method == "tools/list":
        answer(message, {"tools": TOOLS})
    elif method == "tools/call":
        answer(message, {"content": [{"type": "text", "text": "called " + params.get("name", "")}]})
    elif method == "prompts/list":
        # One prompt a page, and always another page.
        page = int(params.get("cursor") or 0)
        answer(message, {"prompts": [{"name": f"p{page}"}], "nextCursor": str(page + 1)})
    elif method == "prompts/get":
        text = "got " + params.get("name", "")
        answer(message, {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]})
    elif method == "resources/list":
        answer(message, {"resources": []})
    elif method == "resources/templates/list":
        answer(message, {"resourceTemplates": TEMPLATES})
    elif method == "resources/read":
        uri = params.get("uri", "")
        answer(message, {"contents": [{"uri": uri, "text": "read " + uri}]})
    else:
        answer(message, error={"code": -32601, "message": "method not found: " + method})
