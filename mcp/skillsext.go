package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// ExtensionSkills identifies the MCP Skills extension (SEP-2640) in the
// server's capabilities.
const ExtensionSkills = "io.modelcontextprotocol/skills"

// Limits of SEP-2640 per skill: a skill past either is not served (every
// conforming host must accept skills up to them, none past them).
const (
	maxSkillResources = 512
	maxSkillBytes     = 16 << 20
)

// Cache hints of the results of the extension and of resources/*
// (2026-07-28's CacheableResult): a client may reuse a result this long.
// "private": the results are this server's (a tenant's) view, not to be
// shared across users by an intermediary.
const (
	cacheTTLMillis = 60_000
	cacheScope     = "private"
)

// capabilities are the server's capabilities in initialize and
// server/discover: tools, resources (the skill files) and the Skills
// extension without its optional directory reads.
func capabilities() map[string]any {
	return map[string]any{
		"tools":      map[string]any{},
		"resources":  map[string]any{},
		"extensions": map[string]any{ExtensionSkills: map[string]any{}},
	}
}

// extensionMethod answers the methods of the Skills extension and of the
// resources the skills' files are: ok is false for any other method.
func (s *Server) extensionMethod(info callInfo, req *request) (result map[string]any, rerr *rpcError, ok bool) {
	switch req.Method {
	case "skills/list":
		result, rerr = s.skillsList(req)
	case "skills/get":
		result, rerr = s.skillsGet(req)
	case "resources/list":
		result, rerr = s.resourcesList(req)
	case "resources/templates/list":
		result, rerr = s.resourceTemplates(req)
	case "resources/read":
		result, rerr = s.resourcesRead(req)
	default:
		return nil, nil, false
	}
	if rerr == nil && info.stateless {
		result["ttlMs"], result["cacheScope"] = cacheTTLMillis, cacheScope
	}
	return result, rerr, true
}

// noCursor decodes params that may only carry a cursor this server never
// hands out (its lists come in one page).
func noCursor(req *request) *rpcError {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil {
		return errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	if p.Cursor != nil {
		return errorf(CodeInvalidParams, "invalid params: unknown cursor (this server returns every entry in one page)")
	}
	return nil
}

// skillsList is skills/list: the entry of every served skill, in one
// page. A skill whose files cannot be listed with digests (a symlink in
// it, over the SEP's limits) is left out and reported on the log.
func (s *Server) skillsList(req *request) (map[string]any, *rpcError) {
	if e := noCursor(req); e != nil {
		return nil, e
	}
	skills, _ := s.catalog()
	entries := make([]map[string]any, 0, len(skills))
	for _, sk := range skills {
		e, err := s.skillJSON(sk)
		if err != nil {
			s.reportOnce(sk.Path, "not in skills/list: "+err.Error())
			continue
		}
		entries = append(entries, e)
	}
	return map[string]any{"skills": entries}, nil
}

// skillsGet is skills/get: the entry of the skill whose SKILL.md URI is
// params.uri, or -32602.
func (s *Server) skillsGet(req *request) (map[string]any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	name, rel, err := parseSkillURI(p.URI)
	if err == nil && rel != "SKILL.md" {
		err = errors.New("a skill is named by the URI of its SKILL.md: skill://<skill>/SKILL.md")
	}
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %s: %v", oneLine(p.URI, 200), err)
	}
	sk, err := s.lookup(name)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "no skill is served at %s: %v", oneLine(p.URI, 200), err)
	}
	e, err := s.skillJSON(sk)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "the skill at %s is not served: %v", oneLine(p.URI, 200), err)
	}
	return map[string]any{"skill": e}, nil
}

// skillJSON is the Skill entry of sk: its SKILL.md URI, its frontmatter
// and every file with the SHA-256 of the skill's canonical digest
// (sign.Manifest: every regular file, SKILL.sig at the root left out; a
// symlink or special file refuses the skill) and its size.
func (s *Server) skillJSON(sk skillEntry) (map[string]any, error) {
	dir, remove, err := s.readable(sk)
	defer remove()
	if err != nil {
		return nil, err
	}
	m, err := sign.Manifest(dir)
	if err != nil {
		return nil, err
	}
	files, err := manifestFiles(m)
	if err != nil {
		return nil, err
	}
	if len(files) > maxSkillResources {
		return nil, fmt.Errorf("%d files, over the %d of a skill the Skills extension allows", len(files), maxSkillResources)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	resources := make([]map[string]any, 0, len(files))
	var total int64
	for _, f := range files {
		st, err := root.Lstat(f.path)
		if err != nil {
			return nil, err
		}
		if total += st.Size(); total > maxSkillBytes {
			return nil, fmt.Errorf("files of over %d bytes, the most for a skill the Skills extension allows", maxSkillBytes)
		}
		resources = append(resources, map[string]any{
			"uri": skillURI(sk.Name, f.path), "digest": "sha256:" + f.sha256, "size": st.Size(),
		})
	}
	src, _, err := readSkillFile(dir, "SKILL.md", maxSkillMD)
	if err != nil {
		return nil, err
	}
	fm, err := frontmatterJSON(src)
	if err != nil {
		return nil, err
	}
	return map[string]any{"uri": skillURI(sk.Name, "SKILL.md"), "frontmatter": fm, "resources": resources}, nil
}

// maxSkillMD is the largest SKILL.md validation accepts.
const maxSkillMD = 1 << 20

// manifestFile is one file line of a canonical manifest.
type manifestFile struct {
	path, sha256 string
}

// manifestFiles reads the lines of a manifest (sign.Manifest): "MODE SHA256
// PATH", after the header.
func manifestFiles(m []byte) ([]manifestFile, error) {
	body, ok := bytes.CutPrefix(m, []byte(sign.ManifestHeader))
	if !ok {
		return nil, errors.New("manifest without its header")
	}
	var files []manifestFile
	for line := range strings.SplitSeq(strings.TrimSuffix(string(body), "\n"), "\n") {
		if line == "" {
			continue
		}
		_, rest, ok1 := strings.Cut(line, " ")
		sum, p, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || len(sum) != 64 {
			return nil, fmt.Errorf("manifest line %q", oneLine(line, 100))
		}
		files = append(files, manifestFile{path: p, sha256: sum})
	}
	return files, nil
}

// resourcesList is resources/list: the SKILL.md of every served skill.
// The other files of a skill are in its skills/get entry and under the
// template of resources/templates/list.
func (s *Server) resourcesList(req *request) (map[string]any, *rpcError) {
	if e := noCursor(req); e != nil {
		return nil, e
	}
	skills, _ := s.catalog()
	list := make([]map[string]any, 0, len(skills))
	for _, sk := range skills {
		list = append(list, map[string]any{
			"uri": skillURI(sk.Name, "SKILL.md"), "name": sk.Name,
			"description": sk.Description, "mimeType": "text/markdown",
		})
	}
	return map[string]any{"resources": list}, nil
}

func (s *Server) resourceTemplates(req *request) (map[string]any, *rpcError) {
	if e := noCursor(req); e != nil {
		return nil, e
	}
	return map[string]any{"resourceTemplates": []map[string]any{{
		"uriTemplate": "skill://{skill}/{+path}", "name": "skill-file",
		"description": "A file of a skill; skills/get lists them with their SHA-256 digests.",
	}}}, nil
}

// resourcesRead is resources/read of a skill file: its bytes as text when
// they are UTF-8, else as base64, read without following any symlink
// (openat2 RESOLVE_NO_SYMLINKS below the skill folder; Linux only) and at
// most Config.MaxFileBytes (SKILL.md: as much as validation accepts).
// SKILL.sig is not a file of the skill.
func (s *Server) resourcesRead(req *request) (map[string]any, *rpcError) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	shown := oneLine(p.URI, 200)
	name, rel, err := parseSkillURI(p.URI)
	if err == nil && rel == sign.SignatureFile {
		err = errors.New("the signature is not a file of the skill")
	}
	if err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %s: %v", shown, err)
	}
	sk, err := s.lookup(name)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "resource not found: %s: %v", shown, err)
	}
	dir, remove, err := s.readable(sk)
	defer remove()
	if err != nil {
		return nil, errorf(CodeInvalidParams, "resource not found: %s: %v", shown, err)
	}
	max := s.cfg.MaxFileBytes
	if rel == "SKILL.md" {
		max = maxSkillMD // validation has bounded it already; read_skill returns it whole too
	}
	data, size, err := readBeneath(dir, rel, 0, max)
	if err != nil {
		return nil, errorf(CodeInvalidParams, "resource not found: %s: %v", shown, err)
	}
	if size > int64(len(data)) {
		return nil, errorf(CodeInvalidParams, "%s: %d bytes, over the %d bytes resources/read returns (the server's file limit)", shown, size, max)
	}
	content := map[string]any{"uri": p.URI, "mimeType": mimeOf(rel)}
	if utf8.Valid(data) {
		content["text"] = string(data)
	} else {
		content["blob"] = base64.StdEncoding.EncodeToString(data)
	}
	return map[string]any{"contents": []map[string]any{content}}, nil
}

// mimeOf is the media type of a skill file by its extension; a fixed
// table, so that the answer does not depend on the host's mime files.
func mimeOf(rel string) string {
	switch strings.ToLower(path.Ext(rel)) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".py":
		return "text/x-python"
	case ".sh", ".bash":
		return "text/x-shellscript"
	case ".js", ".mjs":
		return "text/javascript"
	case ".json":
		return "application/json"
	case ".txt", "":
		return "text/plain"
	case ".html", ".htm":
		return "text/html"
	case ".csv":
		return "text/csv"
	case ".yaml", ".yml", ".toml":
		return "text/plain"
	}
	return "application/octet-stream"
}
