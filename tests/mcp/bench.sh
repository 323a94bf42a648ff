#!/usr/bin/env bash
# bench.sh - side-by-side latency of 1,000 sequential reads of the same file:
# `wrench mcp serve`'s read versus @modelcontextprotocol/server-filesystem's
# read_text_file, measured by ../shared/bench/mcp_latency.py with the same
# client in one run (both the Python SDK client and the raw JSON-RPC client).
#
# usage: tests/mcp/bench.sh [--calls N] WRENCH_BIN [FILE]
#   FILE defaults to crates/core/src/executor.rs; it is copied into a temp dir
#   that serves as both servers' root.
# Needs: python3 with `mcp`, node, target/ci-node (bash .ci/install.sh).
# Env: MCP_LATENCY (path of mcp_latency.py), WRENCH_NODE_MODULES.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ws="$(cd "$here/../.." && pwd)"
CALLS=1000
if [ "${1:-}" = "--calls" ]; then CALLS="$2"; shift 2; fi
[ $# -ge 1 ] || { sed -n '2,12p' "$0"; exit 1; }
WRENCH="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
FILE="${2:-$ws/crates/core/src/executor.rs}"
LAT="${MCP_LATENCY:-$ws/../shared/bench/mcp_latency.py}"
NM="${WRENCH_NODE_MODULES:-$ws/target/ci-node/node_modules}"
FS="$NM/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -f "$LAT" ] || { echo "bench.sh: mcp_latency.py not found at $LAT (set MCP_LATENCY)" >&2; exit 1; }
[ -f "$FS" ] || { echo "bench.sh: server-filesystem not installed in $NM (bash .ci/install.sh)" >&2; exit 1; }
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root" "$tmp/state"
cp "$FILE" "$tmp/root/file.txt"
root="$(cd "$tmp/root" && pwd -P)"
export WRENCH_STATE_DIR="$tmp/state" WRENCH_CONFIG="$tmp/config.toml"
: > "$WRENCH_CONFIG"
for client in sdk raw; do
  echo "== client: $client, $CALLS sequential reads of $(wc -c < "$root/file.txt") bytes"
  echo "-- wrench mcp serve: read"
  python3 "$LAT" --client "$client" --starts 3 --list-calls 10 --calls "$CALLS" \
    --server "$WRENCH mcp serve --root $root" --call "read:{\"path\":\"file.txt\"}" \
    --json "$tmp/wrench-$client.json"
  echo "-- server-filesystem: read_text_file"
  python3 "$LAT" --client "$client" --starts 3 --list-calls 10 --calls "$CALLS" \
    --server "node $FS $root" --call "read_text_file:{\"path\":\"$root/file.txt\"}" \
    --json "$tmp/fs-$client.json"
  python3 - "$tmp/wrench-$client.json" "$tmp/fs-$client.json" "$client" <<'PY'
import json, sys
def med(p):
    d = json.load(open(p))
    return next(r for r in d["rows"] if r.get("measure") == "call")["median"]
try:
    w, f = med(sys.argv[1]), med(sys.argv[2])
    print(f"== {sys.argv[3]}: median wrench {w*1e3:.3f} ms, server-filesystem {f*1e3:.3f} ms, ratio {w/f:.3f} (goal <= 0.2)")
except Exception as e:
    print(f"(could not compare the JSON results: {e})")
PY
done
