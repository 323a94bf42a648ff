#!/usr/bin/env python3
"""A language server that answers like one whose state keeps moving.

Only the retry protocol is faked here (real servers answer ContentModified
only under races a test cannot provoke on demand). argv[1]: a directory
where it writes `requests.json`, the methods of every request it got.

- textDocument/definition: -32801 (ContentModified) twice, then -32802
  (ServerCancelled) once, then a location (line 0 of the asked document).
- textDocument/hover: -32801 every time (the client must give up, bounded).
"""
import json
import os
import sys

OUT = sys.argv[1]
seen = []
definition_calls = 0


def read():
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        k, v = line.decode().split(":", 1)
        headers[k.lower()] = v.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def send(msg):
    body = json.dumps(msg).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def error(mid, code, message):
    send({"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}})


while True:
    m = read()
    method = m.get("method")
    if "id" in m and method is not None:
        seen.append(method)
        with open(os.path.join(OUT, "requests.json"), "w") as f:
            json.dump(seen, f)
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"capabilities": {
            "definitionProvider": True, "hoverProvider": True, "textDocumentSync": 1}}})
    elif method == "textDocument/didOpen":
        doc = m["params"]["textDocument"]
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
              "params": {"uri": doc["uri"], "diagnostics": [], "version": doc["version"]}})
    elif method == "textDocument/definition":
        definition_calls += 1
        if definition_calls <= 2:
            error(m["id"], -32801, "content modified")
        elif definition_calls == 3:
            error(m["id"], -32802, "server cancelled")
        else:
            uri = m["params"]["textDocument"]["uri"]
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"uri": uri, "range": {
                "start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}}})
    elif method == "textDocument/hover":
        error(m["id"], -32801, "content modified")
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": m["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif "id" in m and method is not None:
        send({"jsonrpc": "2.0", "id": m["id"], "result": None})
