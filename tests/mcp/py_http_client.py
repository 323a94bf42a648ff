#!/usr/bin/env python3
"""py_http_client.py - drive `wrench mcp serve --http` with the official
Python SDK (`mcp`), over streamable HTTP with a bearer token.

usage: py_http_client.py URL TOKEN
  With the token: list tools, read hello.txt, then edit hello.txt (an ask in
  mode ask) while answering every elicitation with "allow": the answer of
  the very client that makes the call.
  Without a token: initialize must fail.
Prints one JSON object; exits 1 with a message on failure.
"""
import asyncio
import json
import sys

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamablehttp_client


def text_of(r):
    return "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")


def is_error(r):
    return bool(getattr(r, "isError", getattr(r, "is_error", False)))


async def with_token(url, token, seen):
    asked = []

    async def elicit(context, p):
        asked.append(p.message)
        return types.ElicitResult(action="accept", content={"allow": True})

    headers = {"Authorization": "Bearer " + token}
    async with streamablehttp_client(url, headers=headers) as (r, w, _):
        async with ClientSession(r, w, elicitation_callback=elicit) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            seen["tool_count"] = len(tools)
            r1 = await s.call_tool("read", {"path": "hello.txt"})
            seen["read_is_error"] = is_error(r1)
            seen["read_text"] = text_of(r1)
            r2 = await s.call_tool(
                "edit", {"path": "hello.txt", "old_string": "world", "new_string": "self-approved"}
            )
            seen["edit_is_error"] = is_error(r2)
            seen["edit_text"] = text_of(r2)
    seen["asked"] = asked


async def without_token(url, seen):
    try:
        async with streamablehttp_client(url, timeout=5) as (r, w, _):
            async with ClientSession(r, w) as s:
                await asyncio.wait_for(s.initialize(), 10)
                seen["no_token_initialized"] = True
    except BaseException as e:  # the SDK raises an ExceptionGroup from its task group
        seen["no_token_initialized"] = False
        seen["no_token_error"] = repr(e)[:300]


async def main(url, token):
    seen = {}
    await with_token(url, token, seen)
    await without_token(url, seen)
    print(json.dumps(seen))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
