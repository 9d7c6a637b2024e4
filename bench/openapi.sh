#!/usr/bin/env bash
# What `openapi!` costs at build time: one small crate per row, serving the tools generated from
# GitHub's REST API description (`@octokit/openapi` 23.0.2, 1,223 operations, installed by
# scripts/openapi.sh into .cache/openapi), with include filters and without, beside a baseline
# crate with one hand-written tool. For each: the time to build the crate itself (its
# dependencies already built; dev and release profiles, the median of ROUNDS builds), the size of
# the release binary, and how many tools it serves. Writes bench/openapi-results.md.
#
#   bench/openapi.sh [ROUNDS]     # 3 rounds by default; run it on a quiet machine
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
rounds="${1:-3}"

scripts/openapi.sh --install-only
description="$root/.cache/openapi/node_modules/@octokit/openapi/generated/api.github.com.json"
[ -f "$description" ] || { echo "FAIL: $description is missing; run scripts/openapi.sh" >&2; exit 1; }

work="$root/bench/target/openapi"
export CARGO_TARGET_DIR="$work/target" CARGO_INCREMENTAL=0
mkdir -p "$work"
renames=$(python3 "$root/bench/openapi-renames.py" "$description")

# row name | what it serves | the module's body
rows=(
  "baseline|one hand-written tool, no openapi!|"
  "github-issues|GitHub, include_tags = [\"issues\"]|mcp_runtime::openapi!(\"api.github.com.json\", include_tags = [\"issues\"]);"
  "github-repos|GitHub, include_tags = [\"repos\"]|mcp_runtime::openapi!(\"api.github.com.json\", include_tags = [\"repos\"], rename = [$renames]);"
  "github-all|GitHub, every operation (the 25 longest names renamed)|mcp_runtime::openapi!(\"api.github.com.json\", rename = [$renames]);"
)

crate="$work/crate"
mkdir -p "$crate/src"
cp "$description" "$crate/src/api.github.com.json"
cp "$root/Cargo.lock" "$crate/Cargo.lock"
cat >"$crate/Cargo.toml" <<TOML
[package]
name = "openapi-bench"
version = "0.1.0"
edition = "2024"
publish = false

[dependencies]
mcp-runtime = { path = "$root/mcp-runtime", default-features = false, features = ["macros", "openapi"] }
tokio = { version = "1.47", features = ["rt-multi-thread", "macros"] }

[workspace]
TOML

write_main() {
  cat >"$crate/src/main.rs" <<RS
use mcp_runtime::prelude::*;

/// Add two integers.
#[tool]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

mod api {
    $1
}

#[tokio::main]
async fn main() -> mcp_runtime::Result<()> {
    Server::new("bench", "0.1.0").serve_stdio().await
}
RS
}

# The median of the numbers on stdin (milliseconds), in seconds.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2) / 1000}'; }

build_seconds() { # profile
  local flag=() times=()
  [ "$1" = release ] && flag=(--release)
  for _ in $(seq "$rounds"); do
    touch "$crate/src/main.rs"
    local start end
    start=$(date +%s%N)
    cargo build --manifest-path "$crate/Cargo.toml" "${flag[@]}" --quiet || return 1
    end=$(date +%s%N)
    times+=("$(( (end - start) / 1000000 ))")
  done
  printf '%s\n' "${times[@]}" | median
}

echo "== dependencies (not timed)"
write_main ""
cargo build --manifest-path "$crate/Cargo.toml" --quiet
cargo build --manifest-path "$crate/Cargo.toml" --release --quiet

out="$root/bench/openapi-results.md"
{
  echo "# \`openapi!\` build costs"
  echo
  echo "\`bench/openapi.sh $rounds\` on $(date -u +%Y-%m-%d), $(nproc) cores, $(rustc --version | cut -d' ' -f1-2)."
  echo "Each row is one crate serving the tools of its module (and one hand-written \`add\`),"
  echo "built with its dependencies already built: the crate's own build, macro expansion,"
  echo "type check, code generation and link, median of $rounds. Sizes: the release binary."
  echo
  echo "| row | serves | tools | dev build | release build | release binary |"
  echo "|---|---|---:|---:|---:|---:|"
} >"$out"
for row in "${rows[@]}"; do
  IFS='|' read -r name what body <<<"$row"
  write_main "$body"
  echo "== $name"
  dev=$(build_seconds dev) || { echo "FAIL: $name does not build" >&2; exit 1; }
  release=$(build_seconds release) || { echo "FAIL: $name does not build" >&2; exit 1; }
  size=$(stat -c %s "$CARGO_TARGET_DIR/release/openapi-bench")
  tools=$(python3 "$root/bench/openapi-count.py" "$CARGO_TARGET_DIR/release/openapi-bench")
  printf '| %s | %s | %s | %.1f s | %.1f s | %.1f MB |\n' "$name" "$what" "$tools" "$dev" "$release" "$(awk "BEGIN {print $size / 1000000}")" | tee -a "$out"
done
echo "== wrote $out"
