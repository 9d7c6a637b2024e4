"""An upstream for the client tests (tests/integration/client.rs): a server built with the
official Python SDK's high-level `MCPServer` (mcp 2.3.0), so what the Rust client talks to is
the SDK's own protocol code. Run as `python upstream_server.py stdio` or
`python upstream_server.py http PORT` (Streamable HTTP on 127.0.0.1:PORT at /mcp)."""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("python-upstream", instructions="A test upstream built with MCPServer.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def count_with_progress(steps: int, ctx: Context) -> str:
    """Reports progress once a step, and logs the end."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step}")
    await ctx.info(f"counted {steps} steps")
    return f"counted {steps}"


@server.tool()
async def flood(count: int, ctx: Context, pad: int = 0) -> str:
    """Sends `count` log notifications as fast as it can, each padded with `pad` bytes."""
    padding = "x" * pad
    for i in range(count):
        await ctx.info(f"flood {i} {padding}")
    return f"sent {count}"


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A greeting for `name`."""
    return f"Hello, {name}!"


@server.resource("info://version", mime_type="text/plain")
def version() -> str:
    """The upstream's version."""
    return "1.0.0"


@server.prompt()
def review(code: str) -> str:
    """Review a piece of code."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
