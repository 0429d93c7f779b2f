package prepare

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// testWheel returns a pure-Python wheel of project name (a module of the
// same name with "_" for "-") at version, whose module holds body: what
// pip needs to accept it (METADATA, WHEEL, RECORD in a .dist-info folder).
// With scripts, its entry_points.txt declares them as console scripts
// ("name = module:function").
func testWheel(t *testing.T, name, version, body string, scripts ...string) (file string, data []byte) {
	t.Helper()
	mod := strings.ReplaceAll(name, "-", "_")
	info := fmt.Sprintf("%s-%s.dist-info", mod, version)
	files := []struct{ name, body string }{
		{mod + "/__init__.py", body},
		{info + "/METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version)},
		{info + "/WHEEL", "Wheel-Version: 1.0\nGenerator: skill-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "/entry_points.txt", "[console_scripts]\n" + strings.Join(scripts, "\n") + "\n"},
		{info + "/RECORD", fmt.Sprintf("%s/__init__.py,,\n%s/METADATA,,\n%s/WHEEL,,\n%s/entry_points.txt,,\n%s/RECORD,,\n", mod, info, info, info, info)},
	}
	return fmt.Sprintf("%s-%s-py3-none-any.whl", mod, version), zipOf(t, files)
}

// zipOf returns a zip archive of files, in order.
func zipOf(t *testing.T, files []struct{ name, body string }) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := z.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testIndex serves a PEP 503 simple index on loopback: one page per
// project listing its files with their SHA-256, the files under /files/.
// downloads counts the files served.
type testIndex struct {
	*httptest.Server
	files     map[string][]byte // file name -> bytes
	projects  map[string][]string
	downloads int
}

func newTestIndex(t *testing.T) *testIndex {
	ix := &testIndex{files: map[string][]byte{}, projects: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/{project}/", func(w http.ResponseWriter, r *http.Request) {
		names, ok := ix.projects[r.PathValue("project")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<!DOCTYPE html><html><body>\n")
		for _, n := range names {
			fmt.Fprintf(w, "<a href=\"/files/%s#sha256=%x\">%s</a>\n", n, sha256.Sum256(ix.files[n]), n)
		}
		fmt.Fprint(w, "</body></html>\n")
	})
	mux.HandleFunc("/files/{name}", func(w http.ResponseWriter, r *http.Request) {
		data, ok := ix.files[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ix.downloads++
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(data)
	})
	ix.Server = httptest.NewServer(mux)
	t.Cleanup(ix.Close)
	return ix
}

// add serves data as file of project.
func (ix *testIndex) add(project, file string, data []byte) {
	ix.files[file] = data
	ix.projects[project] = append(ix.projects[project], file)
}
