#!/usr/bin/env bash
# The runtime's layers, checked: dependencies run one way, transport -> server -> items (tool,
# prompt, resource, completion) -> context (with the server handle beside it) -> protocol
# (DESIGN.md §4). For each module of
# mcp-runtime/src this lists the other modules it names (`crate::x`, outside comments) and fails
# on any that its layer may not name. Run it with no arguments; it prints the graph either way.
set -euo pipefail
cd "$(dirname "$0")/../mcp-runtime/src"

# The client (`mcp_runtime::client`) sits beside the server: it speaks the protocol's types and
# the items' result types, and neither the server nor the transports name it. The gateway
# (`Server::proxy`) sits above both: the server knows it only through `server/attach.rs`.
# module: the modules it may name. Anything not listed here (lib.rs, __private, bounds, testing)
# may name anything: they sit on top.
declare -A allowed=(
  [protocol]=""
  [error]=""
  [schema]=""
  [metadata]="protocol"
  [context]="handle protocol error"
  [completion]="context protocol"
  [tool]="completion context protocol schema metadata error"
  [prompt]="tool completion context protocol schema metadata error"
  [resource]="tool completion context protocol schema metadata error"
  [skill]="resource tool completion context protocol schema metadata error"
  [app]="resource tool completion context protocol schema metadata error"
  [openapi]="tool completion context protocol schema metadata error"
  [registration]="tool prompt resource"
  [trace]="context protocol"
  [handle]="protocol error"
  [client]="tool prompt resource completion context protocol schema metadata error"
  [server]="handle registration trace skill app tool prompt resource completion context protocol schema metadata error"
  [transport]="server handle trace tool prompt resource completion context protocol error"
  [gateway]="server client handle tool prompt resource completion context protocol schema metadata error"
)
order=(gateway transport server client registration trace skill app openapi tool prompt resource completion context handle schema metadata error protocol)

status=0
for module in "${order[@]}"; do
  files=$(ls -d "$module" "$module.rs" 2>/dev/null || true)
  [ -n "$files" ] || continue
  names=$(grep -rhEv '^\s*//' $files | grep -oE 'crate::[a-z_]+' | sed 's/crate:://' | grep -vx "$module" | sort | uniq -c || true)
  line=""
  while read -r count name; do
    [ -n "$name" ] || continue
    if [[ " ${allowed[$module]} " == *" $name "* ]]; then
      line+="$name($count) "
    else
      line+="!$name($count) "
      status=1
    fi
  done <<<"$names"
  printf '%-13s -> %s\n' "$module" "$line"
done
if [ "$status" -ne 0 ]; then
  echo "FAIL: a module names one of a layer above it (marked !): see the allowed list in $0" >&2
fi
exit "$status"
