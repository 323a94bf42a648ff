"""A stdio MCP server that writes one endless line: at once (mode `start`),
or as its answer to tools/call (mode `call`). It first starts a child that
sleeps, and writes its own pid and the child's to PIDFILE, so a test can
check that nothing of it outlives the session.

usage: endless_line_server.py MODE PIDFILE"""
import json
import subprocess
import sys

mode, pidfile = sys.argv[1], sys.argv[2]
sleeper = subprocess.Popen(["sleep", "300"])
with open(pidfile, "w") as f:
    f.write(f"{__import__('os').getpid()} {sleeper.pid}\n")

CHUNK = "x" * 65536


def flood():
    try:
        sys.stdout.write('{"jsonrpc": "2.0", "id": 0, "result": "')
        while True:
            sys.stdout.write(CHUNK)
    except (BrokenPipeError, OSError):
        sys.exit(0)


def reply(id_, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": id_, "result": result}) + "\n")
    sys.stdout.flush()


if mode == "start":
    flood()

for line in sys.stdin:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        reply(msg["id"], {
            "protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "endless", "version": "1"},
        })
    elif method == "tools/list":
        reply(msg["id"], {"tools": [{"name": "flood", "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        flood()
