// A real MCP client for the tests of skill-sandbox mcp: one release of the
// official TypeScript SDK per protocol era (pinned in package-lock.json)
// starts the server given on the command line over stdio, pings it (but in
// 2026-07-28, which has no ping), lists its tools, runs the bundled example
// skill, sends a JSON-RPC batch in 2025-03-26 (the one revision with
// batches), reads every skill file through the Skills extension and checks
// its digest (skills.mjs), and prints what it got as one JSON object on
// stdout, with the messages as they went over the wire.
//
//   node client.mjs ERA SERVER-BINARY [ARGS...]
//
// ERA is the revision the client's SDK release speaks by default: 2024-11-05
// (SDK 1.0.4), 2025-03-26 (1.12.3), 2025-06-18 (1.24.0), 2025-11-25 (1.32.2)
// or 2026-07-28 (@modelcontextprotocol/client 2.4.0, pinned to it).
import { readFileSync } from "node:fs";
import { checkSkills } from "./skills.mjs";
import { recordWire } from "./wire.mjs";

const eras = {
  "2024-11-05": { pkg: "sdk-2024-11-05", v2: false },
  "2025-03-26": { pkg: "sdk-2025-03-26", v2: false },
  "2025-06-18": { pkg: "sdk-2025-06-18", v2: false },
  "2025-11-25": { pkg: "@modelcontextprotocol/sdk", v2: false },
  "2026-07-28": { pkg: "sdk-2026-07-28", v2: true },
};

const [era, command, ...args] = process.argv.slice(2);
if (!eras[era] || !command) {
  console.error(`usage: node client.mjs ERA SERVER-BINARY [ARGS...] (ERA: ${Object.keys(eras).join(", ")})`);
  process.exit(2);
}
const { pkg, v2 } = eras[era];
// The v1 SDK publishes its files by path; v2 names its entry points.
const { Client } = await import(v2 ? pkg : `${pkg}/client/index.js`);
const { StdioClientTransport } = await import(v2 ? `${pkg}/stdio` : `${pkg}/client/stdio.js`);
const { version: sdkVersion } = JSON.parse(readFileSync(new URL(`node_modules/${pkg}/package.json`, import.meta.url), "utf8"));

const clientName = `skill-sandbox-sdk-test-${era}`;
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });

const wire = recordWire(transport);

// SDK 1.0 requires the options object (capabilities).
const options = v2 ? { capabilities: {}, versionNegotiation: { mode: { pin: era } } } : { capabilities: {} };
const client = new Client({ name: clientName, version: "1.0.0" }, options);
await client.connect(transport);
const ping = v2 ? null : await client.ping();
const { tools } = await client.listTools();
const call = await client.callTool({
  name: "run_skill_script",
  arguments: { skill: "word-stats", script: "stats.py", args: ["references/sample.txt"] },
});
// 2025-03-26 is the one revision with JSON-RPC batches: one goes out
// through the SDK's transport. Its client neither sends batches nor
// parses the array that comes back (it reports it to onerror), so the
// answer is read from the server's stdout as it comes.
let batch = null;
if (era === "2025-03-26") {
  const answered = new Promise((resolve) => {
    let buf = "";
    transport._process.stdout.on("data", (chunk) => {
      buf += chunk;
      for (let i; (i = buf.indexOf("\n")) >= 0; buf = buf.slice(i + 1)) {
        if (buf.startsWith("[")) resolve(JSON.parse(buf.slice(0, i)));
      }
    });
  });
  transport.onerror = () => {}; // the array the SDK cannot parse
  await transport.send([
    { jsonrpc: "2.0", id: "batch-ping", method: "ping" },
    { jsonrpc: "2.0", id: "batch-list", method: "tools/call", params: { name: "list_skills", arguments: {} } },
    { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "none" } },
  ]);
  batch = await answered;
}
// The Skills extension (SEP-2640), checked as http.mjs does.
const { files, sdkSkills } = await checkSkills(client, pkg, v2);
await client.close();
console.log(JSON.stringify({
  era,
  sdk: `${pkg}@${sdkVersion}`,
  client: clientName,
  server: client.getServerVersion(),
  ping,
  tools: tools.map((t) => t.name),
  call,
  batch,
  files,
  sdkSkills,
  wire,
}));
