# Sourced by the interop scripts (not run): the `everything` example on a free 127.0.0.1 port.
#
#   example_binaries             # $MCP_EVERYTHING_BIN and $MCP_GATEWAY_BIN (exported): the
#                                # debug everything, gateway and auth examples, built now unless
#                                # MCP_EVERYTHING_BIN is set (auth and gateway sit beside it)
#   start_everything /mcp        # starts it with --port, waits for the port; sets $url, $work,
#                                # $server; the server is stopped and $work removed at exit
#   await_port PORT PID LOG      # waits (at most 30 s) for PORT; fails, showing LOG, if PID exits
#
# The examples are built with the whole workspace's features, as `cargo test --workspace` builds
# them, so after that command this builds nothing and the suites run the same binaries the
# integration tests ran. (.ci/run's feature-set step checks that the examples also build on
# their own crate's features, `-p mcp-examples` alone.)

example_binaries() {
    if [ -z "${MCP_EVERYTHING_BIN:-}" ]; then
        echo "== building the everything, gateway and auth examples"
        cargo build --workspace --example everything --example gateway --example auth --locked --quiet
        local target_dir
        target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
        MCP_EVERYTHING_BIN="$target_dir/debug/examples/everything"
    fi
    MCP_GATEWAY_BIN="${MCP_GATEWAY_BIN:-$(dirname "$MCP_EVERYTHING_BIN")/gateway}"
    export MCP_EVERYTHING_BIN MCP_GATEWAY_BIN
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
