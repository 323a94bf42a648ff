#!/usr/bin/env python3
"""py_client.py - drive `wrench mcp serve` with the official Python SDK (`mcp`).

usage: py_client.py WRENCH_BIN ROOT SCENARIO
  basic        --permission-mode yolo: list tools; call read, grep, edit, bash; progress;
               an error result
  elicit-yes   default mode (ask): edit asks through elicitation, we accept
  elicit-no    default mode (ask): edit asks through elicitation, we decline
  roots        the client offers ROOT/sub as its only root: paths resolve there
Prints one JSON object; exits 1 with a message on failure.
"""
import asyncio
import os
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def text_of(r):
    return "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")


def attr(obj, snake, camel):
    """Field access across SDK versions (1.x camelCase, 2.x snake_case)."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    return getattr(obj, camel, None)


def is_error(r):
    return bool(attr(r, "is_error", "isError"))


def fail(msg):
    print("py_client: " + msg, file=sys.stderr)
    sys.exit(1)


async def main(wrench, root, scenario):
    args = ["mcp", "serve", "--root", root, "--session", "py-" + scenario]
    if scenario == "basic":
        args += ["--permission-mode", "yolo"]
    # The SDK's default environment keeps only HOME, PATH and the like: pass
    # ours, so the server uses the test's state dir and never ~/.local/state.
    params = StdioServerParameters(command=wrench, args=args, env=dict(os.environ))
    seen = {"scenario": scenario}
    asked = []

    async def elicit(context, p):
        asked.append(p.message)
        if scenario == "elicit-yes":
            return types.ElicitResult(action="accept", content={"allow": True})
        return types.ElicitResult(action="decline")

    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri="file://" + root + "/sub")])

    kw = {}
    if scenario.startswith("elicit"):
        kw["elicitation_callback"] = elicit
    if scenario == "roots":
        kw["list_roots_callback"] = roots
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w, **kw) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            names = [t.name for t in tools]
            seen["tool_count"] = len(tools)
            for n in ("read", "grep", "edit", "bash"):
                if n not in names:
                    fail(f"tools/list lacks {n}: {names}")
            if scenario == "basic":
                read = next(t for t in tools if t.name == "read")
                seen["read_only_hint"] = attr(read.annotations, "read_only_hint", "readOnlyHint") if read.annotations else None
                r1 = await s.call_tool("read", {"path": "hello.txt"})
                if is_error(r1):
                    fail("read failed: " + text_of(r1))
                seen["read_text"] = text_of(r1)
                seen["read_structured"] = attr(r1, "structured_content", "structuredContent") is not None
                r2 = await s.call_tool("grep", {"pattern": "hello"})
                if is_error(r2):
                    fail("grep failed: " + text_of(r2))
                seen["grep_text"] = text_of(r2)
                r3 = await s.call_tool("edit", {"path": "hello.txt", "old_string": "world", "new_string": "from py"})
                if is_error(r3):
                    fail("edit failed: " + text_of(r3))
                progress = []

                async def on_progress(p, total, message):
                    progress.append([p, total, message])

                r4 = await s.call_tool("bash", {"command": "cat hello.txt"}, progress_callback=on_progress)
                if is_error(r4):
                    fail("bash failed: " + text_of(r4))
                seen["bash_text"] = text_of(r4)
                seen["progress"] = progress
                r5 = await s.call_tool("read", {"path": "no-such-file.txt"})
                seen["missing_is_error"] = (is_error(r5))
                seen["missing_text"] = text_of(r5)
            elif scenario.startswith("elicit"):
                r0 = await s.call_tool("read", {"path": "hello.txt"})
                if is_error(r0):
                    fail("read failed: " + text_of(r0))
                r1 = await s.call_tool("edit", {"path": "hello.txt", "old_string": "world", "new_string": "asked"})
                seen["asked"] = asked
                seen["edit_is_error"] = (is_error(r1))
                seen["edit_text"] = text_of(r1)
            elif scenario == "roots":
                r1 = await s.call_tool("read", {"path": "inner.txt"})
                seen["inner_is_error"] = (is_error(r1))
                seen["inner_text"] = text_of(r1)
                r2 = await s.call_tool("read", {"path": "../hello.txt"})
                seen["outside_is_error"] = (is_error(r2))
                seen["outside_text"] = text_of(r2)
            else:
                fail("unknown scenario " + scenario)
    print(json.dumps(seen))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(*sys.argv[1:]))
