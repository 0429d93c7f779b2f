// A real MCP client over Streamable HTTP for the tests of skill-sandbox mcp
// --http: one release of the official TypeScript SDK per protocol era (as
// client.mjs) connects with its StreamableHTTPClientTransport to the URL
// given, pings (not in 2026-07-28), lists the tools, runs the bundled
// example skill, then reads every skill through the Skills extension
// (SEP-2640): skills/list, and resources/read of every file listed, each
// checked here against the entry's sha256 digest and size (computed with
// node:crypto, independently of the server). With 2026-07-28 the SDK's own
// SkillsClient (@modelcontextprotocol/client/ext/skills) lists and reads
// them too and verifies them its way. The session is then ended (DELETE)
// where the revision has sessions. Prints one JSON object on stdout: what
// the client got, the messages as they went over the wire and each HTTP
// exchange (method, MCP headers, status, content type).
//
//   node http.mjs ERA URL [TOKEN]
//
// ERA as in client.mjs, without 2024-11-05 (whose SDK release has no
// Streamable HTTP transport: that revision used HTTP+SSE).
import { readFileSync } from "node:fs";
import { checkSkills } from "./skills.mjs";
import { recordWire } from "./wire.mjs";

const eras = {
  "2025-03-26": { pkg: "sdk-2025-03-26", v2: false },
  "2025-06-18": { pkg: "sdk-2025-06-18", v2: false },
  "2025-11-25": { pkg: "@modelcontextprotocol/sdk", v2: false },
  "2026-07-28": { pkg: "sdk-2026-07-28", v2: true },
};

const [era, url, token] = process.argv.slice(2);
if (!eras[era] || !url) {
  console.error(`usage: node http.mjs ERA URL [TOKEN] (ERA: ${Object.keys(eras).join(", ")})`);
  process.exit(2);
}
const { pkg, v2 } = eras[era];
const { Client } = await import(v2 ? pkg : `${pkg}/client/index.js`);
const { StreamableHTTPClientTransport } = await import(v2 ? pkg : `${pkg}/client/streamableHttp.js`);
const { version: sdkVersion } = JSON.parse(readFileSync(new URL(`node_modules/${pkg}/package.json`, import.meta.url), "utf8"));

// Every HTTP exchange, as fetch saw it.
const http = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init = {}) => {
  const h = new Headers(init.headers);
  const res = await realFetch(input, init);
  http.push({
    method: init.method ?? "GET",
    protocolVersion: h.get("mcp-protocol-version"),
    session: h.get("mcp-session-id"),
    mcpMethod: h.get("mcp-method"),
    mcpName: h.get("mcp-name"),
    status: res.status,
    contentType: res.headers.get("content-type"),
    sessionAssigned: res.headers.get("mcp-session-id"),
  });
  return res;
};

const clientName = `skill-sandbox-sdk-http-test-${era}`;
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });

const wire = recordWire(transport);

const options = v2 ? { capabilities: {}, versionNegotiation: { mode: { pin: era } } } : { capabilities: {} };
const client = new Client({ name: clientName, version: "1.0.0" }, options);
await client.connect(transport);
const session = transport.sessionId ?? null;
const ping = v2 ? null : await client.ping();
const { tools } = await client.listTools();
const call = await client.callTool({
  name: "run_skill_script",
  arguments: { skill: "word-stats", script: "stats.py", args: ["references/sample.txt"] },
});

const { files, skills, sdkSkills } = await checkSkills(client, pkg, v2);

let terminated = null;
if (session && typeof transport.terminateSession === "function") {
  await transport.terminateSession();
  terminated = true;
}
await client.close();
console.log(JSON.stringify({
  era,
  sdk: `${pkg}@${sdkVersion}`,
  client: clientName,
  server: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  session,
  terminated,
  ping,
  tools: tools.map((t) => t.name),
  call,
  skills,
  files,
  sdkSkills,
  wire,
  http,
}));
