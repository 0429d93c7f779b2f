// Package audit builds and writes the audit record of one skill-sandbox call.
//
// A Record is one line of JSON (JSONL) with a versioned schema
// (SchemaVersion, the JSON Schema returned by Schema, and docs/audit.md). Its
// field names are chosen so that log shippers need no remapping: Datadog
// reads "timestamp", "level", "message" and "host" as its reserved
// attributes, and Loki's "| json" stage extracts every field.
//
// A call builds its Record with FromRun from a Meta (what was asked) and the
// run.Result and error returned by run.Sandbox.Run, then writes it with
// Write (to a stream such as stderr) or Append (to a log file shared by
// concurrent runs). The record never holds the script's output, only its
// size and SHA-256.
package audit
