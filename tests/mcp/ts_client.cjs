// ts_client.cjs - drive `wrench mcp serve` with the official TypeScript SDK
// client (@modelcontextprotocol/sdk): list the tools, call read, grep, edit and
// bash, check annotations, an error result and progress notifications.
//
// usage: node ts_client.cjs NODE_MODULES_DIR WRENCH_BIN ROOT
// Prints one JSON object with what it saw; exits 1 with a message on failure.
"use strict";
const path = require("path");
const { createRequire } = require("module");

const [nodeModules, wrench, root] = process.argv.slice(2);
if (!nodeModules || !wrench || !root) {
  console.error("usage: node ts_client.cjs NODE_MODULES_DIR WRENCH_BIN ROOT");
  process.exit(2);
}
const req = createRequire(path.join(nodeModules, "noop.js"));
const { Client } = req("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = req("@modelcontextprotocol/sdk/client/stdio.js");

function fail(msg) {
  console.error("ts_client: " + msg);
  process.exit(1);
}
function textOf(r) {
  return (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function main() {
  const transport = new StdioClientTransport({
    command: wrench,
    args: ["mcp", "serve", "--root", root, "--permission-mode", "yolo", "--session", "ts-client", "--structured-content"],
    env: process.env,
    stderr: "inherit",
  });
  const client = new Client({ name: "wrench-e2e-ts", version: "1.0.0" });
  await client.connect(transport);
  const seen = {};

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["read", "grep", "edit", "bash"]) {
    if (!names.includes(n)) fail(`tools/list lacks ${n}: ${names.join(",")}`);
  }
  const read = tools.find((t) => t.name === "read");
  const edit = tools.find((t) => t.name === "edit");
  seen.tool_count = tools.length;
  seen.read_annotations = read.annotations;
  seen.edit_read_only = edit.annotations && edit.annotations.readOnlyHint;
  if (!read.inputSchema || read.inputSchema.type !== "object") fail("read has no object input schema");

  const r1 = await client.callTool({ name: "read", arguments: { path: "hello.txt" } });
  if (r1.isError) fail("read failed: " + textOf(r1));
  seen.read_text = textOf(r1);
  seen.read_structured = r1.structuredContent !== undefined;
  seen.read_structured_content = r1.structuredContent ? r1.structuredContent.content : null;

  const r2 = await client.callTool({ name: "grep", arguments: { pattern: "hello" } });
  if (r2.isError) fail("grep failed: " + textOf(r2));
  seen.grep_text = textOf(r2);

  const r3 = await client.callTool({
    name: "edit",
    arguments: { path: "hello.txt", old_string: "world", new_string: "from ts" },
  });
  if (r3.isError) fail("edit failed: " + textOf(r3));
  seen.edit_text = textOf(r3);

  const progress = [];
  const r4 = await client.callTool(
    { name: "bash", arguments: { command: "cat hello.txt" } },
    undefined,
    { onprogress: (p) => progress.push(p) },
  );
  if (r4.isError) fail("bash failed: " + textOf(r4));
  seen.bash_text = textOf(r4);
  seen.progress_count = progress.length;
  seen.progress = progress;

  const r5 = await client.callTool({ name: "read", arguments: { path: "no-such-file.txt" } });
  seen.missing_is_error = r5.isError === true;
  seen.missing_text = textOf(r5);

  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
