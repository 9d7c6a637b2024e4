#!/usr/bin/env bash
# Installs Debian's redis-server for the Rust tests that start one of their own (readiness
# while Redis is down, in tests/integration/deploy.rs); does nothing when it is there. Fails
# loudly when apt-get cannot install it: a test never passes without its Redis.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/debian.sh
debian_install redis-server
