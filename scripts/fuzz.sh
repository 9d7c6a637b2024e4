#!/usr/bin/env bash
# Builds and runs every fuzz target in fuzz/ for a fixed time each (default 20 s, the CI budget).
#
#   scripts/fuzz.sh            # 20 s per target
#   scripts/fuzz.sh 600        # a longer run: 10 minutes per target
#   scripts/fuzz.sh 3600 session   # one target for an hour
#   scripts/fuzz.sh --install-only # install cargo-fuzz if missing; build nothing
#   scripts/fuzz.sh --build-only   # install cargo-fuzz if missing and build every target; run none
#
# FUZZ_DEV=1 builds and runs the targets unoptimized (`cargo fuzz --dev`, debug assertions and
# the sanitizer as always): a build that costs a fraction of the optimized one, for a short smoke
# run such as .ci/run's; a long run wants the default optimized build, which runs each input
# several times faster. Give the same FUZZ_DEV to the build and to the run.
#
# cargo-fuzz needs nightly-only flags (sanitizers, -Z options); the stable toolchain accepts them
# with RUSTC_BOOTSTRAP=1, which is set here for the fuzz build only. cargo-fuzz itself is installed
# from crates.io into .cache/cargo-fuzz when missing, so CI needs nothing beyond stable Rust and a
# C++ compiler (libFuzzer is built from source by libfuzzer-sys).
#
# Findings land in fuzz/artifacts/<target>/ (reproduce with
# `RUSTC_BOOTSTRAP=1 cargo fuzz run <target> fuzz/artifacts/<target>/<file>`); the corpus grows in
# fuzz/corpus/<target>/, seeded from the committed fuzz/seeds/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=
case "${1:-}" in
    --install-only | --build-only) mode=$1; shift ;;
esac
seconds="${1:-20}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(decode session uri_template http_headers dpop)
fi

root="$PWD/.cache/cargo-fuzz"
if ! command -v cargo-fuzz >/dev/null 2>&1 && [ ! -x "$root/bin/cargo-fuzz" ]; then
    echo "== installing cargo-fuzz into $root"
    cargo install cargo-fuzz --version 0.13.2 --locked --root "$root"
fi
export PATH="$root/bin:$PATH"
export RUSTC_BOOTSTRAP=1
if [ "$mode" = --install-only ]; then
    exit 0
fi

profile=()
[ "${FUZZ_DEV:-}" = 1 ] && profile=(--dev)

cd fuzz
# Every target in one build (the dependencies once, both cores busy); `cargo fuzz run` below then
# finds each built.
echo "== building the fuzz targets: ${targets[*]}"
if [ "$#" -eq 0 ]; then
    cargo fuzz build "${profile[@]}"
else
    for target in "${targets[@]}"; do cargo fuzz build "${profile[@]}" "$target"; done
fi
if [ "$mode" = --build-only ]; then
    exit 0
fi
for target in "${targets[@]}"; do
    echo "== fuzz $target for ${seconds}s"
    mkdir -p "corpus/$target"
    # -timeout: an input that takes this long counts as a hang (the session target bounds its own
    # waits well below it). -rss_limit_mb: a leak or an unbounded buffer fails the run.
    cargo fuzz run "${profile[@]}" "$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1
done
