package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

func TestGrantsAndArtifactsInRecord(t *testing.T) {
	long := "/data/" + strings.Repeat("x", 2000)
	var files []run.Artifact
	for i := range 300 {
		files = append(files, run.Artifact{Path: fmt.Sprintf("%s/f%03d", long, i), Size: 3, SHA256: strings.Repeat("ab", 32), Action: run.ArtifactCreated, Type: "file"})
	}
	for _, c := range []struct {
		name          string
		asked, result run.Grants
		artifacts     run.Artifacts
		wantRead      []string
		wantFiles     int
		wantGrantsCut bool
		wantFilesCut  bool
	}{
		{name: "resolved grants win", asked: run.Grants{Read: []string{"in.txt"}}, result: run.Grants{Read: []string{"/real/in.txt"}, Write: []string{"/real/out"}, Created: []string{"/real/out"}},
			artifacts: run.Artifacts{Files: []run.Artifact{{Path: "/real/out/a.csv", Size: 3, Action: run.ArtifactCreated, Type: "file"}, {Path: "/real/out/old", Action: run.ArtifactDeleted, Type: "file"}}, Count: 2, BytesHashed: 3}, wantRead: []string{"/real/in.txt"}, wantFiles: 2},
		{name: "asked grants of a refused call", asked: run.Grants{Read: []string{"/asked/in.txt"}}, wantRead: []string{"/asked/in.txt"}},
		{name: "caps", result: run.Grants{Read: strings.Split(strings.Repeat(long+",", 40), ",")[:40]},
			artifacts: run.Artifacts{Files: files, Count: 300}, wantFiles: maxArtifactFiles, wantGrantsCut: true, wantFilesCut: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			meta := sampleMeta()
			meta.Grants = c.asked
			res := sampleResult()
			res.Grants, res.Artifacts = c.result, c.artifacts
			line, err := FromRun(meta, res, nil).MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if len(line) > MaxLineBytes {
				t.Fatalf("line of %d bytes", len(line))
			}
			if err := CheckLine(line); err != nil {
				t.Fatal(err)
			}
			var rec Record
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatal(err)
			}
			if c.wantRead != nil && strings.Join(rec.Grants.Read, ",") != strings.Join(c.wantRead, ",") {
				t.Errorf("grants.read %v, want %v", rec.Grants.Read, c.wantRead)
			}
			if len(rec.Artifacts.Files) != c.wantFiles || rec.Artifacts.Truncated != c.wantFilesCut || rec.Grants.Truncated != c.wantGrantsCut {
				t.Errorf("files %d truncated %v, grants truncated %v", len(rec.Artifacts.Files), rec.Artifacts.Truncated, rec.Grants.Truncated)
			}
			if c.wantFilesCut && rec.Artifacts.Count != 300 {
				t.Errorf("count %d, want 300 (all changes found)", rec.Artifacts.Count)
			}
		})
	}
}
