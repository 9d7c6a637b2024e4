# Sourced by the interop scripts (not run): the `everything` example on a free 127.0.0.1 port.
#
#   everything_binary            # $MCP_EVERYTHING_BIN, or the debug example built now (exported)
#   start_everything /mcp        # starts it with --port, waits for the port; sets $url, $work,
#                                # $server; the server is stopped and $work removed at exit
#   await_port PORT PID LOG      # waits (at most 30 s) for PORT; fails, showing LOG, if PID exits

everything_binary() {
    if [ -z "${MCP_EVERYTHING_BIN:-}" ]; then
        echo "== building the everything example"
        cargo build -p mcp-examples --example everything --locked --quiet
        local target_dir
        target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
        MCP_EVERYTHING_BIN="$target_dir/debug/examples/everything"
    fi
    export MCP_EVERYTHING_BIN
}

start_everything() {
    work=$(mktemp -d)
    local port
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    "$MCP_EVERYTHING_BIN" --port "$port" >"$work/server.out" 2>"$work/server.log" &
    server=$!
    trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
    await_port "$port" "$server" "$work/server.log" || exit 1
    url="http://127.0.0.1:$port$1"
}

await_port() {
    for _ in $(seq 1 300); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        if ! kill -0 "$2" 2>/dev/null; then echo "the server exited:"; cat "$3"; return 1; fi
        sleep 0.1
    done
}
