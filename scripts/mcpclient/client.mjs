// A real MCP client for the tests of skill-sandbox mcp: the official
// TypeScript SDK (pinned in package-lock.json) starts the server given on
// the command line over stdio, pings it, lists its tools, runs the bundled
// example skill and prints what it got as one JSON object on stdout.
//
//   node client.mjs SERVER-BINARY [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs SERVER-BINARY [ARGS...]");
  process.exit(2);
}
const clientName = "skill-sandbox-sdk-test";
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: clientName, version: "1.0.0" });
await client.connect(transport);
const ping = await client.ping();
const { tools } = await client.listTools();
const call = await client.callTool({
  name: "run_skill_script",
  arguments: { skill: "word-stats", script: "stats.py", args: ["references/sample.txt"] },
});
await client.close();
console.log(JSON.stringify({
  client: clientName,
  server: client.getServerVersion(),
  protocolVersion: transport.protocolVersion ?? null,
  ping,
  tools: tools.map((t) => t.name),
  call,
}));
