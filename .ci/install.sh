#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine of the project's
# kind (Debian + the Rust toolchain): language servers, MCP SDK clients and
# reference servers, and Python packages. Idempotent; safe to re-run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
say() { printf '[install] %s\n' "$*"; }

die() { printf '[install] error: %s\n' "$*" >&2; exit 1; }

need=()
for pkg in git python3 clangd bash procps; do
  command -v dpkg >/dev/null && dpkg -s "$pkg" >/dev/null 2>&1 && continue
  [ "$pkg" = procps ] && command -v ps >/dev/null && continue
  command -v "$pkg" >/dev/null || need+=("$pkg")
done
# npm and pip may come from elsewhere (nodesource, pyenv): only missing ones are installed.
command -v npm >/dev/null || need+=(npm)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    for p in git python3 clangd npm; do
      command -v "$p" >/dev/null || die "$p is missing and this is not a Debian-like system; install ${need[*]} and re-run"
    done
  elif [ "$(id -u)" = 0 ]; then
    say "apt-get install ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null \
      || die "apt-get install ${need[*]} failed"
  else
    for p in git python3 clangd npm; do
      command -v "$p" >/dev/null || die "$p is missing; run this script as root (it uses apt-get) or install: ${need[*]}"
    done
  fi
fi
command -v clangd >/dev/null || die "clangd is not on PATH after the install; apt-get install clangd"
clangd --version >/dev/null 2>&1 || die "clangd is installed but does not run (clangd --version failed)"

# Node tools live in a project-local prefix so the machine stays clean.
command -v npm >/dev/null || die "npm is missing; apt-get install npm (or install Node.js) and re-run"
prefix="$here/../target/ci-node"
if [ ! -f "$prefix/.done-v2" ]; then
  say "npm install (language servers, MCP SDK and reference servers) into $prefix"
  mkdir -p "$prefix"
  (cd "$prefix" && [ -f package.json ] || echo '{"name":"wrench-ci-tools","private":true}' > "$prefix/package.json")
  (cd "$prefix" && npm install --no-audit --no-fund --loglevel=error \
    pyright@1 typescript-language-server@5 typescript@5 \
    @modelcontextprotocol/sdk@1 @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem \
    @modelcontextprotocol/inspector >/dev/null) || die "npm install into $prefix failed"
  touch "$prefix/.done-v2"
fi
for b in pyright-langserver typescript-language-server tsserver; do
  [ -x "$prefix/node_modules/.bin/$b" ] || die "$b is missing from $prefix/node_modules/.bin; remove $prefix/.done-v2 and re-run"
done

command -v python3 >/dev/null || die "python3 is missing; apt-get install python3"
if ! python3 -c 'import mcp, importlib.metadata as m; assert m.version("mcp").startswith("1.")' 2>/dev/null; then
  python3 -m pip --version >/dev/null 2>&1 || die "pip is missing (python3 -m pip); apt-get install python3-pip and re-run"
  say "pip install mcp 1.x"
  python3 -m pip install --quiet --disable-pip-version-check 'mcp>=1.2,<2' \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'mcp>=1.2,<2' \
    || die "pip install mcp failed"
fi
say "done: clangd $(clangd --version 2>/dev/null | head -1 | sed 's/.*version //'), language servers in $prefix"
