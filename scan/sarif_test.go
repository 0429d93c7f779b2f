package scan

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSARIFShape checks the SARIF 2.1.0 structure that code-scanning
// tools read, on the findings of every trigger skill.
func TestSARIFShape(t *testing.T) {
	var results []*Result
	for _, d := range []string{"hidden-unicode", "binaries", "pipe-to-shell", "network-endpoint"} {
		results = append(results, mustScan(t, filepath.Join(testdata, "trigger", d)))
	}
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, results, "1.2.3", ""); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Schema  string `json:"$schema"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID               string `json:"id"`
						ShortDescription struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
						DefaultConfiguration struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
						Properties map[string]any `json:"properties"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	dec := json.NewDecoder(&buf)
	if err := dec.Decode(&log); err != nil {
		t.Fatalf("SARIF does not have the expected shape: %v", err)
	}
	if log.Version != "2.1.0" || log.Schema == "" || len(log.Runs) != 1 {
		t.Fatalf("version %q schema %q runs %d", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	levels := map[string]bool{"none": true, "note": true, "warning": true, "error": true}
	ids := map[string]int{}
	for i, r := range run.Tool.Driver.Rules {
		if r.ID == "" || r.ShortDescription.Text == "" || !levels[r.DefaultConfiguration.Level] || r.Properties["security-severity"] == nil {
			t.Errorf("rule %d incomplete: %+v", i, r)
		}
		if _, dup := ids[r.ID]; dup {
			t.Errorf("rule %s twice", r.ID)
		}
		ids[r.ID] = i
	}
	if run.Tool.Driver.Name != "skill-sandbox" || len(ids) != len(Rules()) {
		t.Errorf("driver %q with %d rules", run.Tool.Driver.Name, len(ids))
	}
	want := 0
	for _, r := range results {
		want += len(r.Findings)
	}
	if len(run.Results) != want || want == 0 {
		t.Fatalf("%d results for %d findings", len(run.Results), want)
	}
	lined := 0
	for _, r := range run.Results {
		idx, ok := ids[r.RuleID]
		if !ok || r.RuleIndex == nil || *r.RuleIndex != idx {
			t.Errorf("result rule %q index %v not in driver.rules", r.RuleID, r.RuleIndex)
		}
		if !levels[r.Level] || r.Message.Text == "" || len(r.Locations) != 1 {
			t.Errorf("result %+v", r)
			continue
		}
		pl := r.Locations[0].PhysicalLocation
		if uri := pl.ArtifactLocation.URI; uri == "" || bytes.ContainsAny([]byte(uri), "\\ ") || uri[0] == '/' {
			t.Errorf("artifact uri %q", uri)
		}
		if pl.Region != nil {
			if pl.Region.StartLine < 1 {
				t.Errorf("startLine %d", pl.Region.StartLine)
			}
			lined++
		}
	}
	if lined == 0 {
		t.Error("no result has a region")
	}
}

func TestArtifactURI(t *testing.T) {
	tests := []struct{ base, file, root, want string }{
		{"skills/pdf", "scripts/a.py", "", "skills/pdf/scripts/a.py"},
		{"./skills/pdf/", "SKILL.md", "/ci/repo", "skills/pdf/SKILL.md"},
		{"/srv/skills/x", "a b/é.md", "", "file:///srv/skills/x/a%20b/%C3%A9.md"},
		{"x", "100%.txt", "", "x/100%25.txt"},
		// An absolute path under the working folder (a CI checkout) is
		// made relative to it: code scanning needs repository paths.
		{"/ci/repo/skills/pdf", "SKILL.md", "/ci/repo", "skills/pdf/SKILL.md"},
		{"/ci/repo/skills/pdf", "SKILL.md", "/ci/repo/", "skills/pdf/SKILL.md"},
		{"/ci/repo", "SKILL.md", "/ci/repo", "SKILL.md"},
		{"/ci/repo2/x", "SKILL.md", "/ci/repo", "file:///ci/repo2/x/SKILL.md"},
		{"/x", "SKILL.md", "/", "x/SKILL.md"},
		{"C:/skills/x", "a.py", "", "file:///C:/skills/x/a.py"},
		{"C:/repo/skills/x", "a.py", "C:/repo", "skills/x/a.py"},
	}
	for _, tt := range tests {
		if got := artifactURI(tt.base, tt.file, tt.root); got != tt.want {
			t.Errorf("artifactURI(%q, %q, %q) = %q, want %q", tt.base, tt.file, tt.root, got, tt.want)
		}
	}
}
