#!/usr/bin/env bash
# Instructions per request of a bench server, counted by callgrind (valgrind): the figures the
# speed work quotes (issues 13, 14 and 31). Unlike calls/s they do not move with other work on
# the machine, so one run compares two builds; HTTP's move a little with timing (how often the
# connection finds the next request already read), so it prints the service call's own count too:
# axum's router and the handler, which moves far less.
#
#   bench/callgrind.sh [BINARY] [OUT_DIR]   # default: bench/target/release/bench-ours, a temp dir
#   bench/callgrind.sh --layers [OUT_DIR] [BINARY]   # the telemetry rows: bench-layers, stdio
#
# - stdio, 1 and 64 in flight: `bench-runner --drive-stdio` against the server under callgrind,
#   2,000 and 12,000 `tools/call add`; the difference over 10,000 (startup and shutdown cancel).
# - HTTP, one connection: the server under callgrind, 1,000 calls of warm-up, counters zeroed,
#   then 5,000 calls on a new connection (its handshake included) and a dump; the total over
#   5,000. The callgrind files stay in OUT_DIR for `callgrind_annotate`.
# - --layers: bench-layers' stdio server with no layer, one empty `from_fn` layer, the rate
#   limiter (a rate never reached), metrics only, telemetry (spans and metrics, the request span
#   made on the tracer), telemetry with every request sampled out, and telemetry with the
#   request span made by `tracing-opentelemetry` (layered), one call at a time as above; and
#   its `otel-floor` mode, the OpenTelemetry SDK's own cost of one span with a `tools/call`
#   span's attributes and one histogram record with its attributes (10,000 and 60,000 of each;
#   the difference over 50,000).
# valgrind is installed with apt-get when missing (Debian's package); bench-runner is built.
set -euo pipefail
layers=
if [ "${1:-}" = --layers ]; then
    layers=1
    shift
    # --layers OUT_DIR BINARY: BINARY is a bench-layers build to count (built when not given).
    set -- "${2:-}" "${1:-}"
fi
binary=${1:+$(realpath "$1")}
out=${2:+$(realpath -m "$2")}
cd "$(dirname "$0")"
binary=${binary:-$PWD/target/release/bench-ours}
out=${out:-$(mktemp -d /tmp/callgrind.XXXXXX)}
mkdir -p "$out"
if ! command -v valgrind >/dev/null || ! command -v callgrind_control >/dev/null; then
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind; }; then
        echo "FAIL: valgrind is missing and could not be installed with apt-get" >&2
        exit 1
    fi
fi
cargo build --release --quiet -p bench-runner
runner=$PWD/target/release/bench-runner

total() { grep -E '^(summary|totals):' "$1" | head -1 | awk '{print $2}'; }

# stdio WINDOW [MODE]: MODE is bench-layers' first argument.
stdio() {
    local window=$1 mode=${2:-} calls ir=()
    for calls in 2000 12000; do
        local name=stdio$window${mode:+-$mode}-$calls
        printf '#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s 2>/dev/null %s %s "$@"\n' \
            "$out/$name.out" "$binary" "$mode" > "$out/$name.sh"
        chmod +x "$out/$name.sh"
        "$runner" --drive-stdio "$out/$name.sh" "$window" "$calls" >/dev/null
        ir+=("$(total "$out/$name.out")")
    done
    echo "stdio${mode:+ ($mode)}, $window in flight: $(( (ir[1] - ir[0]) / 10000 )) instructions per request"
}

http() {
    local port pid
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    valgrind --tool=callgrind --callgrind-out-file="$out/http1.%p" "$binary" http "127.0.0.1:$port" \
        2>"$out/http1.log" &
    pid=$!
    for _ in $(seq 1 300); do
        (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    "$runner" --drive-http "127.0.0.1:$port" 1 1000 >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    "$runner" --drive-http "127.0.0.1:$port" 1 5000 >/dev/null
    callgrind_control -d "$pid" >/dev/null 2>&1
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    # The service call (the endpoint's handler; through axum's router for a server that routes
    # every request) moves far less with timing. Which of its wrappers keeps a symbol of its own
    # (futures-util's `Map` or the `map::Map` inside it) depends on inlining: either is matched.
    local service
    # awk reads the whole listing (a `grep -m1` would close the pipe early, and pipefail would
    # count callgrind_annotate's SIGPIPE as a failure).
    service=$(callgrind_annotate --inclusive=yes "$out/http1.$pid.1" 2>/dev/null \
        | awk '!found && /(Either<A,B>|Map<Fut,F>|Oneshot<S,Req>) as core::future::future::Future>::poll/ {gsub(",", "", $1); print $1; found=1}')
    echo "HTTP, one connection: $(( $(total "$out/http1.$pid.1") / 5000 )) instructions per request" \
        "($(( ${service:-0} / 5000 )) of them the service call)"
}

if [ -n "$layers" ]; then
    if [ "$binary" = "$PWD/target/release/bench-ours" ]; then
        cargo build --release --quiet -p bench-layers
        binary=$PWD/target/release/bench-layers
    fi
    for mode in stdio-none stdio-empty stdio-rate stdio-metrics stdio-telemetry stdio-sampled stdio-layered; do
        stdio 1 "$mode"
    done
    ir=()
    for spans in 10000 60000; do
        valgrind --tool=callgrind --callgrind-out-file="$out/otel-floor-$spans.out" \
            "$binary" otel-floor "$spans" 2>/dev/null
        ir+=("$(total "$out/otel-floor-$spans.out")")
    done
    echo "the SDK alone: $(( (ir[1] - ir[0]) / 50000 )) instructions per span and histogram record"
    echo "callgrind files in $out"
    exit 0
fi
stdio 1
stdio 64
http
echo "callgrind files in $out"
