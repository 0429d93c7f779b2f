// A real MCP client for the workspace file tools of skill-sandbox mcp: the
// official TypeScript SDK (the release of ERA, as in client.mjs) starts the
// server given on the command line over stdio, puts an input file into the
// workspace with write_workspace_file (text and base64), has run_command
// turn it into an output, reads that back with read_workspace_file (in
// pages), then sends the attacks the test set up (paths through a
// symlink, "..", an absolute path, a FIFO, an auto-run file), and prints
// every tool result as one JSON object on stdout.
//
//   node workspace.mjs ERA SERVER-BINARY [ARGS...]
import { readFileSync } from "node:fs";

const eras = {
  "2025-11-25": { pkg: "@modelcontextprotocol/sdk", v2: false },
  "2026-07-28": { pkg: "sdk-2026-07-28", v2: true },
};
const [era, command, ...args] = process.argv.slice(2);
if (!eras[era] || !command) {
  console.error(`usage: node workspace.mjs ERA SERVER-BINARY [ARGS...] (ERA: ${Object.keys(eras).join(", ")})`);
  process.exit(2);
}
const { pkg, v2 } = eras[era];
const { Client } = await import(v2 ? pkg : `${pkg}/client/index.js`);
const { StdioClientTransport } = await import(v2 ? `${pkg}/stdio` : `${pkg}/client/stdio.js`);
const { version: sdkVersion } = JSON.parse(readFileSync(new URL(`node_modules/${pkg}/package.json`, import.meta.url), "utf8"));

const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const options = v2 ? { capabilities: {}, versionNegotiation: { mode: { pin: era } } } : { capabilities: {} };
const client = new Client({ name: `skill-sandbox-workspace-test-${era}`, version: "1.0.0" }, options);
await client.connect(transport);
const { tools } = await client.listTools();

const results = {};
const call = async (label, name, args) => {
  const r = await client.callTool({ name, arguments: args });
  results[label] = r.structuredContent ?? JSON.parse(r.content[0].text);
  results[label].isError = r.isError;
};
const binary = Buffer.from([0, 1, 2, 255, 254, 10, 13]).toString("base64");
await call("write text", "write_workspace_file", { path: "in/input.txt", content: "hello, workspace\n" });
await call("write base64", "write_workspace_file", { path: "in/blob.bin", content: binary, encoding: "base64" });
await call("run", "run_command", { command: "tr a-z A-Z < in/input.txt > out.txt && od -An -tx1 in/blob.bin" });
await call("read page 1", "read_workspace_file", { path: "out.txt", max_bytes: 6 });
await call("read page 2", "read_workspace_file", { path: "out.txt", offset: results["read page 1"].next_offset });
await call("read base64", "read_workspace_file", { path: "in/blob.bin", encoding: "base64" });
// Attacks: the test made link -> /etc/passwd, linkdir -> a folder outside,
// and a FIFO named fifo in the workspace.
await call("read link", "read_workspace_file", { path: "link" });
await call("write link", "write_workspace_file", { path: "link", content: "pwned\n" });
await call("write through linkdir", "write_workspace_file", { path: "linkdir/planted.txt", content: "pwned\n" });
await call("read ..", "read_workspace_file", { path: "../outside-secret" });
await call("write ..", "write_workspace_file", { path: "in/../../escaped.txt", content: "pwned\n" });
await call("read absolute", "read_workspace_file", { path: "/etc/passwd" });
await call("read fifo", "read_workspace_file", { path: "fifo" });
await call("write fifo", "write_workspace_file", { path: "fifo", content: "x" });
await call("write git hook", "write_workspace_file", { path: ".git/hooks/pre-commit", content: "#!/bin/sh\ntouch /tmp/pwned\n" });
await call("write envrc", "write_workspace_file", { path: ".envrc", content: "touch /tmp/pwned\n" });
await client.close();
console.log(JSON.stringify({ era, sdk: `${pkg}@${sdkVersion}`, tools: tools.map((t) => t.name), results }));
