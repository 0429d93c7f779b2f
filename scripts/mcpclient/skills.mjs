// checkSkills reads every skill of a connected client's server through the
// MCP Skills extension (SEP-2640) and checks it independently of the
// server: skills/list, then resources/read of every file listed, each
// file's sha256 (node:crypto) and size compared with its entry. With the
// v2 SDK (2026-07-28) its own host side, SkillsClient
// (@modelcontextprotocol/client/ext/skills), lists, gets and reads them
// first and verifies them its way (digest, size, frontmatter).
import { createHash } from "node:crypto";

export async function checkSkills(client, pkg, v2) {
  // The SDK's own host side first, so that its reads go to the server
  // and not to the client's cache of the reads below.
  let sdkSkills = null;
  if (v2) {
    const { SkillsClient } = await import(`${pkg}/ext/skills`);
    const sc = new SkillsClient(client);
    const listing = await sc.list();
    sdkSkills = { supported: sc.supported, ttlMs: listing.ttlMs, cacheScope: listing.cacheScope, skills: [] };
    for (const entry of listing.skills) {
      const got = await sc.get(entry.uri);
      const verified = [];
      for (const r of got.skill.resources) {
        const f = await sc.read(got.skill, r.uri);
        verified.push({ uri: f.uri, verified: f.verified, size: f.bytes.length });
      }
      const main = await sc.read(got.skill);
      sdkSkills.skills.push({ uri: entry.uri, name: entry.frontmatter.name, frontmatter: main.frontmatter, verified });
    }
  }
  // Both SDKs want a result schema for a method outside the base spec: v1
  // a zod schema (its passthrough ResultSchema), v2 any Standard Schema
  // (here one taking the result as it is: the checks below are the point).
  const anyResult = v2
    ? { "~standard": { version: 1, vendor: "skill-sandbox-test", validate: (value) => ({ value }) } }
    : (await import(`${pkg}/types.js`)).ResultSchema;
  const listed = await client.request({ method: "skills/list", params: {} }, anyResult);
  const files = [];
  for (const skill of listed.skills) {
    for (const r of skill.resources) {
      const read = await client.readResource({ uri: r.uri });
      const c = read.contents[0];
      const bytes = c.text !== undefined ? Buffer.from(c.text, "utf8") : Buffer.from(c.blob, "base64");
      const digest = "sha256:" + createHash("sha256").update(bytes).digest("hex");
      files.push({ uri: r.uri, digest, size: bytes.length, match: digest === r.digest && bytes.length === r.size });
    }
  }
  return { files, skills: listed.skills, sdkSkills };
}
