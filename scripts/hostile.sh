#!/usr/bin/env bash
# Hostile clients (issues 14 and 26): every row of the issues' tables, each against a fresh
# `everything` (release build) on 127.0.0.1, with the server's RSS sampled every 100 ms and a
# normal client (from 127.0.0.3; the attacker is 127.0.0.2, a newcomer 127.0.0.4) calling a tool
# every 200 ms on its own session. Prints a table (scenario, peak RSS, normal client answered,
# pass/fail) and exits 1 if any row fails: RSS past the ceiling (HOSTILE_RSS_CEILING_MB, 1024 by
# default), the normal client not answered, the server dead or panicked, or the row's own check
# (a newcomer gets in, shutdown within its grace, ...). A server past HOSTILE_KILL_MB (3072) is
# killed and its row reads ">3 GB". The OAuth rows run the real oidc-provider, which
# scripts/oidc.sh installs (npm) into .cache/oidc; without it they fail.
#
# The production layer's rows run the same example with its flags (`--rate-limit`, `--cache`,
# `--metrics-port`, and `--otel`, for which it is built with the `otel-context` feature), and the
# gateway's the `gateway` example over it.
#
# MCP_EVERYTHING_BIN=path (and MCP_GATEWAY_BIN=path) runs against those binaries instead of
# building them (for a "before" measurement of an older commit; `.ci/run` passes the debug
# build its test command made). Extra arguments go to the
# driver, scripts/hostile.py: `--only get-sse-unread,sigterm` runs some rows, `--report FILE`
# writes the table to FILE. Bounded: every loop has a count and a deadline; about 10 minutes
# on 2 cores, 15 at most.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${MCP_EVERYTHING_BIN:-}" ]; then
    bin=$MCP_EVERYTHING_BIN
    gateway=${MCP_GATEWAY_BIN:-}
else
    echo "== building the everything and gateway examples (release)"
    cargo build --release -p mcp-examples --example everything --example gateway \
        --features otel-context --locked --quiet
    target_dir=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    bin="$target_dir/release/examples/everything"
    gateway="$target_dir/release/examples/gateway"
fi
if [ ! -x "$bin" ]; then
    echo "no everything binary at $bin" >&2
    exit 1
fi
scripts/oidc.sh
# The driver stops its servers on SIGTERM; a run cut short by the time limit fails.
exec timeout 1200 python3 scripts/hostile.py --bin "$bin" --gateway-bin "$gateway" "$@"
