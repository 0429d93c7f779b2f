// Package mcp serves Agent Skills to agents over the Model Context Protocol,
// with every script run in the sandbox of package run.
//
// The transport is newline-delimited JSON-RPC 2.0 (the MCP stdio transport):
// one message per line, each line at most Config.MaxMessageBytes. The server
// answers both protocol eras in use:
//
//   - the handshake revisions (2025-11-25, 2025-06-18): initialize,
//     notifications/initialized, ping, tools/list, tools/call,
//     notifications/cancelled;
//   - the stateless revision 2026-07-28: no handshake, server/discover, the
//     protocol version and client capabilities in every request's
//     params._meta, resultType "complete" in every result.
//
// The same server speaks MCP's Streamable HTTP transport through
// Server.HTTPHandler: sessions (Mcp-Session-Id) for the handshake
// revisions, self-contained POSTs for 2026-07-28, every message handled as
// a stdio line is. On both transports it serves the MCP Skills extension
// (SEP-2640): skills/list, skills/get and resources/read of skill:// URIs,
// with the SHA-256 of each file as the skill's canonical digest has it.
//
// The era is decided per request: a request whose params._meta holds
// "io.modelcontextprotocol/protocolVersion" is a 2026-07-28 request; any
// other is a handshake-era request (answered even before initialize, with
// the client name unknown until then).
//
// What a run may do is fixed when the Server is made (Config.Sandbox, the
// operator's policy): a tool call chooses the skill, script, arguments,
// stdin and a shorter time limit, never a wider grant. Every tool call that
// runs something, refused calls included, writes exactly one audit record;
// so does every call of the workspace file tools (write_workspace_file,
// read_workspace_file; offered with Config.Workspace), which reach the
// workspace's files through openat2 without following any symbolic link.
// Every request refused with a JSON-RPC error writes an mcp.refused
// record, at most refusedPerWindow a second, the rest counted into the
// next one (audit.ProtocolRecord).
package mcp
