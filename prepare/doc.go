// Package prepare builds the Python environment a skill's requirements
// need, inside the sandbox, and keeps it in a cache shared by skills that
// need the same.
//
// For most uses, Load the skill's requirements, then Cache.Lookup the
// environment and, when it is missing, Cache.Build it: pip runs in a
// run.Sandbox that may write only the environment being built and reach
// only the package index, so a package's install code (setup.py) runs
// contained like any skill script. Runs then name the environment's
// python as an interpreter (run.Sandbox.Interpreters): read-only, first
// on the script's PATH.
//
// A Node skill's package.json and package-lock.json (LoadNode) are
// built the same way with npm ci (Cache.BuildNode, keyed by NodeKey);
// runs name the environment's node as an interpreter and its
// node_modules as run.Sandbox.NodeModules, which require and import
// both find.
//
// An environment is keyed by the normalised requirements, the
// interpreter's path and version, and the platform; a manifest with the
// digest of its files is written after the build and checked before each
// use (Env.Verify). docs/dependencies.md describes the whole feature.
package prepare
