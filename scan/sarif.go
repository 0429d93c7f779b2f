package scan

import (
	"encoding/json"
	"io"
	"path"
	"path/filepath"
	"strings"
)

// SARIF 2.1.0 (OASIS), the subset GitHub code scanning and other CI tools
// read: one run, the tool's rules, and one result per finding.
type (
	sarifLog struct {
		Version string     `json:"version"`
		Schema  string     `json:"$schema"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		Version        string      `json:"version,omitempty"`
		InformationURI string      `json:"informationUri"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string         `json:"id"`
		ShortDescription     sarifText      `json:"shortDescription"`
		FullDescription      sarifText      `json:"fullDescription"`
		Help                 sarifText      `json:"help"`
		DefaultConfiguration sarifConfig    `json:"defaultConfiguration"`
		Properties           map[string]any `json:"properties"`
	}
	sarifConfig struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID     string          `json:"ruleId"`
		RuleIndex  int             `json:"ruleIndex"`
		Level      string          `json:"level"`
		Message    sarifText       `json:"message"`
		Locations  []sarifLocation `json:"locations"`
		Properties map[string]any  `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
)

// WriteSARIF writes the results as one SARIF 2.1.0 log. Artifact URIs are
// the skill path joined with the file, with '/' separators, relative when
// the skill path was given relative (as CI checkouts are); version is the
// tool version to report. root, when not empty, is an absolute folder (the
// CLI passes its working folder, a CI job's checkout): a file under it
// gets a URI relative to it, as code scanning needs, even when the skill
// path was given absolute; other absolute paths become file:// URIs.
func WriteSARIF(w io.Writer, results []*Result, version, root string) error {
	rules := Rules()
	index := map[string]int{}
	driver := sarifDriver{
		Name:           "skill-sandbox",
		Version:        version,
		InformationURI: "https://github.com/skill-sandbox/skill-sandbox/blob/main/docs/scan.md",
		Rules:          []sarifRule{},
	}
	for i, r := range rules {
		index[r.ID] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID:                   r.ID,
			ShortDescription:     sarifText{r.Summary},
			FullDescription:      sarifText{r.Help},
			Help:                 sarifText{r.Help},
			DefaultConfiguration: sarifConfig{r.Severity.sarifLevel()},
			Properties: map[string]any{
				"security-severity": r.Severity.securitySeverity(),
				"tags":              []string{"security", "agent-skills"},
			},
		})
	}
	run := sarifRun{Tool: sarifTool{driver}, Results: []sarifResult{}}
	root = filepath.ToSlash(root)
	for _, res := range results {
		base := filepath.ToSlash(res.Path)
		for _, f := range res.Findings {
			loc := sarifPhysical{ArtifactLocation: sarifArtifact{URI: artifactURI(base, f.File, root)}}
			if f.Line > 0 {
				loc.Region = &sarifRegion{StartLine: f.Line}
			}
			run.Results = append(run.Results, sarifResult{
				RuleID:     f.Rule,
				RuleIndex:  index[f.Rule],
				Level:      f.Severity.sarifLevel(),
				Message:    sarifText{f.Reason},
				Locations:  []sarifLocation{{PhysicalLocation: loc}},
				Properties: map[string]any{"severity": f.Severity.String()},
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{
		Version: "2.1.0",
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Runs:    []sarifRun{run},
	})
}

// artifactURI joins the skill path and the file into a URI reference:
// relative paths stay relative, absolute ones become relative to root when
// under it (root "" is none) and file:// URIs otherwise (a Windows drive
// path as file:///C:/...), and characters that are not allowed in a URI
// are percent-encoded.
func artifactURI(base, file, root string) string {
	p := path.Clean(path.Join(base, file))
	if r := path.Clean(root); root != "" && isAbsSlash(r) && isAbsSlash(p) {
		switch {
		case r == "/" && p != "/":
			p = p[1:]
		case strings.HasPrefix(p, r+"/"):
			p = p[len(r)+1:]
		}
	}
	var b strings.Builder
	switch {
	case strings.HasPrefix(p, "/"):
		b.WriteString("file://")
	case isAbsSlash(p): // C:/...
		b.WriteString("file:///")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
	}
	return b.String()
}

// isAbsSlash reports whether the slash-separated path p is absolute on
// any platform: /x, or a Windows drive path C:/x.
func isAbsSlash(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && p[2] == '/' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}
