#!/bin/sh
# Runs the benchmark: builds the three servers, drives them in turn, writes
# bench/results.md and bench/results.json. Arguments go to the runner:
#   --quick             fewer calls and repetitions (a few minutes)
#   --reps N            repetitions (default 5, quick 2)
#   --no-build-times    skip the build-time measurements (the clean builds too)
#   --full-clean-build  also time a from-scratch build of each server (slow)
#   --servers LIST      drive only some servers, e.g. ours,rmcp (for profiling)
#   --no-build          use the binaries already built (A/B runs of swapped binaries)
#   --profile NAME      build the servers with `production` (default: release with fat
#                       LTO and one codegen unit) or `release`; build rows always time release
#   --build-rows-only   only the clean builds of the README's first example (ours with
#                       default features, ours stdio-only, rmcp), merged into the results
#   --clean-build-reps N  rounds of those clean builds (default 3, quick 1)
#   --render            measure nothing: write results.md again from results.json
set -eu
cd "$(dirname "$0")"
cargo build --release --quiet -p bench-runner
exec target/release/bench-runner "$@"
