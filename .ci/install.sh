#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine of the project's
# kind (Debian + the Rust toolchain): language servers, MCP SDK clients and
# reference servers, and Python packages. Idempotent; safe to re-run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
say() { printf '[install] %s\n' "$*"; }

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  need=()
  for pkg in git python3 clangd bash procps; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ ${#need[@]} -gt 0 ]; then
    say "apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

# Node tools live in a project-local prefix so the machine stays clean.
if command -v npm >/dev/null; then
  prefix="$here/../target/ci-node"
  if [ ! -f "$prefix/.done-v2" ]; then
    say "npm install (language servers, MCP SDK and reference servers) into $prefix"
    mkdir -p "$prefix"
    (cd "$prefix" && [ -f package.json ] || echo '{"name":"wrench-ci-tools","private":true}' > "$prefix/package.json")
    (cd "$prefix" && npm install --no-audit --no-fund --loglevel=error \
      pyright@1 typescript-language-server@5 typescript@5 \
      @modelcontextprotocol/sdk@1 @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem \
      @modelcontextprotocol/inspector >/dev/null)
    touch "$prefix/.done-v2"
  fi
fi

if command -v python3 >/dev/null; then
  if ! python3 -c 'import mcp, importlib.metadata as m; assert m.version("mcp").startswith("1.")' 2>/dev/null; then
    say "pip install mcp 1.x"
    python3 -m pip install --quiet --disable-pip-version-check 'mcp>=1.2,<2' || say "pip install mcp failed"
  fi
fi
