#!/usr/bin/env bash
# bench.sh - side-by-side latency of 1,000 sequential reads of the same file:
# `wrench mcp serve`'s read versus @modelcontextprotocol/server-filesystem's
# read_text_file, with the same client in one run, for three clients:
#
#   native  tests/mcp/client (mcp-client): a compiled raw JSON-RPC client
#           that parses every answer whole with serde_json; its own cost per
#           call is a few microseconds, so the figure is the servers';
#   raw     ../shared/bench/mcp_latency.py's raw JSON-RPC client (Python);
#   sdk     the same script with the official Python `mcp` SDK client.
#
# The Python clients spend tens of microseconds of their own per call
# (json.loads of wrench's 18 KB answer alone takes ~70 us), the same for
# every server, which weighs most on the fastest one.
#
# The servers take turns, ROUNDS times per client, so that a machine whose
# speed drifts (a shared VM) weighs on all alike; the ratio reported is the
# median of the rounds' ratios.
#
# A third server runs in every round: tests/mcp/floor (mcp-floor), which does
# no work and answers each call with the very bytes wrench answered. Its
# ratio is the best any server can score with that client on this machine
# at that moment; wrench's distance from it is what wrench itself costs.
#
# usage: tests/mcp/bench.sh [--calls N] [--rounds R] WRENCH_BIN [FILE]
#   FILE defaults to crates/core/src/executor.rs; it is copied into a temp dir
#   that serves as both servers' root.
# Needs: python3 with `mcp`, node, target/ci-node (bash .ci/install.sh),
# cargo (the floor and the client are built in release under
# target/mcp-floor and target/mcp-client).
# Env: MCP_LATENCY (path of mcp_latency.py), WRENCH_NODE_MODULES.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ws="$(cd "$here/../.." && pwd)"
CALLS=1000
ROUNDS=3
while [ $# -gt 0 ]; do
  case "$1" in
    --calls) CALLS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '2,32p' "$0"; exit 1; }
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
cargo build --release --quiet --manifest-path "$here/floor/Cargo.toml" --target-dir "$ws/target/mcp-floor"
FLOOR="$ws/target/mcp-floor/release/mcp-floor"
cargo build --release --quiet --manifest-path "$here/client/Cargo.toml" --target-dir "$ws/target/mcp-client"
NATIVE="$ws/target/mcp-client/release/mcp-client"
# The floor's canned answer: the result wrench gives to the benched call.
python3 - "$WRENCH" "$root" "$tmp/result.json" <<'PY'
import json, subprocess, sys
wrench, root, out = sys.argv[1:]
msgs = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
     "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"path": "file.txt"}}},
]
p = subprocess.Popen([wrench, "mcp", "serve", "--root", root], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=root)
for m in msgs:
    p.stdin.write((json.dumps(m) + "\n").encode())
    p.stdin.flush()
    if "id" in m:
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit(f"bench.sh: {wrench} mcp serve exited before answering {m['method']}")
            reply = json.loads(line)
            if reply.get("id") == m["id"]:
                break
p.stdin.close()
p.wait()
if "result" not in reply or reply["result"].get("isError"):
    sys.exit(f"bench.sh: wrench did not read the file: {reply}")
with open(out, "w") as f:
    json.dump(reply["result"], f, separators=(",", ":"), ensure_ascii=False)
PY
# One server, one client, one round: timings into $tmp/NAME-CLIENT-ROUND.json.
measure() {
  local name="$1" client="$2" r="$3" tool="$4" args="$5"
  shift 5
  if [ "$client" = native ]; then
    "$NATIVE" --calls "$CALLS" --json "$tmp/$name-$client-$r.json" "$tool" "$args" -- "$@"
  else
    python3 "$LAT" --client "$client" --starts 3 --list-calls 10 --calls "$CALLS" \
      --server "$*" --call "$tool:$args" --json "$tmp/$name-$client-$r.json"
  fi
}
for client in native raw sdk; do
  echo "== client: $client, $CALLS sequential reads of $(wc -c < "$root/file.txt") bytes, $ROUNDS rounds"
  for r in $(seq 1 "$ROUNDS"); do
    echo "-- round $r: wrench mcp serve: read"
    measure wrench "$client" "$r" read '{"path":"file.txt"}' "$WRENCH" mcp serve --root "$root"
    echo "-- round $r: mcp-floor (no work, wrench's answer bytes): read"
    measure floor "$client" "$r" read '{"path":"file.txt"}' "$FLOOR" "$tmp/result.json"
    echo "-- round $r: server-filesystem: read_text_file"
    measure fs "$client" "$r" read_text_file "{\"path\":\"$root/file.txt\"}" node "$FS" "$root"
  done
  python3 - "$tmp" "$client" "$ROUNDS" <<'PY'
import json, statistics, sys
tmp, client, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
def med(p):
    d = json.load(open(p))
    return next(r for r in d["rows"] if r.get("measure") == "call")["median"]
try:
    rows = [(med(f"{tmp}/wrench-{client}-{r}.json"), med(f"{tmp}/fs-{client}-{r}.json"),
             med(f"{tmp}/floor-{client}-{r}.json")) for r in range(1, rounds + 1)]
    for i, (w, f, z) in enumerate(rows, 1):
        print(f"   round {i}: wrench {w*1e3:.3f} ms, server-filesystem {f*1e3:.3f} ms, ratio {w/f:.3f}; "
              f"floor {z*1e3:.3f} ms, ratio {z/f:.3f}")
    ratio = statistics.median(w / f for w, f, _ in rows)
    floor = statistics.median(z / f for _, f, z in rows)
    w = statistics.median(r[0] for r in rows)
    f = statistics.median(r[1] for r in rows)
    z = statistics.median(r[2] for r in rows)
    print(f"== {client}: median wrench {w*1e3:.3f} ms, server-filesystem {f*1e3:.3f} ms, ratio {ratio:.3f} "
          f"(median of {rounds} rounds; goal <= 0.2); zero-work floor {z*1e3:.3f} ms, ratio {floor:.3f}")
except Exception as e:
    print(f"(could not compare the JSON results: {e})")
PY
done
