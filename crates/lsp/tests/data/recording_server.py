#!/usr/bin/env python3
"""A minimal language server that records what the client configured.

argv[1]: a directory; it writes there `init.json` (the initializationOptions)
and `configuration.json` (the client's answer to a workspace/configuration
request for the `rust-analyzer` section, sent after `initialized`). It answers
definition with null and publishes empty diagnostics for opened documents.
"""
import json
import os
import sys

OUT = sys.argv[1]


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


def save(name, value):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(value, f)


while True:
    m = read()
    method = m.get("method")
    if method == "initialize":
        save("init.json", m["params"].get("initializationOptions"))
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"capabilities": {
            "definitionProvider": True, "hoverProvider": True, "textDocumentSync": 1}}})
    elif method == "initialized":
        send({"jsonrpc": "2.0", "id": "cfg", "method": "workspace/configuration",
              "params": {"items": [{"section": "rust-analyzer"}, {"section": "other"}]}})
    elif method is None and m.get("id") == "cfg":
        save("configuration.json", m.get("result"))
    elif method == "textDocument/didOpen":
        uri = m["params"]["textDocument"]["uri"]
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
              "params": {"uri": uri, "diagnostics": [], "version": 1}})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": m["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
    elif "id" in m and method is not None:
        send({"jsonrpc": "2.0", "id": m["id"], "result": None})
