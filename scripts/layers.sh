#!/usr/bin/env bash
# The runtime's layers, checked: dependencies run one way, transport -> server -> items (tool,
# prompt, resource, completion) -> context (with the server handle beside it) -> protocol
# (DESIGN.md §4). For each module of
# mcp-runtime/src this lists the other modules it names (`crate::x`, outside comments) and fails
# on any that its layer may not name; then, inside each folder, it fails on files that import each
# other in a loop. Run it with no arguments; it prints the graph either way.
set -euo pipefail
cd "$(dirname "$0")/../mcp-runtime/src"

# The client (`mcp_runtime::client`) sits beside the server: it speaks the protocol's types and
# the items' result types, and neither the server nor the transports name it. The gateway
# (`Server::proxy`) sits above both: the server knows it only through `server/attach.rs`.
# The capabilities around a server (middleware, telemetry, tasks, the replicas' shared store)
# sit above `server/` and name its core (the request path of `server/exchange.rs`, `Core`, the
# registry); the transports sit above them. `server` names `tasks` only in its builder and
# options (the settings, and the `Tasking` the builder installs); the dispatch and the sessions
# call tasks through `Tasking`, defined in `server/dispatch.rs`.
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
  [server]="tasks handle registration trace skill app tool prompt resource completion context protocol schema metadata error"
  [shared]="server handle protocol error"
  [tasks]="shared server tool context protocol error"
  [telemetry]="server trace context protocol error"
  [middleware]="server tool prompt resource completion context protocol metadata error"
  [transport]="middleware telemetry tasks shared server handle trace tool prompt resource completion context protocol error"
  [gateway]="middleware server client handle tool prompt resource completion context protocol schema metadata error"
)
order=(gateway transport middleware telemetry tasks shared server client registration trace skill app openapi tool prompt resource completion context handle schema metadata error protocol)

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
# Files that import each other in a loop inside one folder: each file's `super::x` (and
# `crate::folder::x`) names of a sibling file x, outside comments, fed to tsort, which names a loop.
circles=0
while read -r dir; do
  rel=${dir#./}
  modpath="crate::${rel//\//::}"
  edges=""
  for file in "$dir"/*.rs; do
    [ -e "$file" ] || continue
    self=$(basename "$file" .rs)
    [ "$self" = mod ] && continue
    for sibling in $(perl -0777 -ne '
        s{//[^\n]*}{}g;
        while (/(?:super|\Q'"$modpath"'\E)::(\{[^}]*\}|[a-z_]+)/g) {
          my $m = $1; $m =~ s/[{}]//g;
          for (split /,/, $m) { print "$1\n" if /^\s*([a-z_]+)::/ || /^\s*([a-z_]+)\s*$/ }
        }' "$file" | sort -u); do
      [ "$sibling" = "$self" ] && continue
      if [ -e "$dir/$sibling.rs" ] || [ -e "$dir/$sibling/mod.rs" ]; then
        edges+="$self $sibling"$'\n'
      fi
    done
  done
  [ -n "$edges" ] || continue
  if ! loop=$(printf '%s' "$edges" | tsort 2>&1 >/dev/null) || [ -n "$loop" ]; then
    echo "FAIL: files of $rel import each other in a loop:" $(printf '%s\n' "$loop" | grep -v 'input contains a loop' | sed 's/^tsort: //') >&2
    circles=1
  fi
done < <(find . -type d)
[ "$circles" -eq 0 ] || status=1
if [ "$status" -ne 0 ]; then
  echo "FAIL: a module names one of a layer above it (marked !): see the allowed list in $0" >&2
fi
exit "$status"
