package prepare

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// pyprojectDocs are documents the reader accepts, with the normalised
// requirements they give ("" for none).
var pyprojectDocs = []struct{ doc, want string }{
	{"", ""},
	{"[build-system]\nrequires = [\"setuptools>=61\"]\n", ""},
	{"[project]\nname = \"x\"\ndependencies = [\"Requests>=2\", 'py_yaml[a, b] ; python_version < \"3.12\"']\n",
		"py-yaml[a,b] ; python_version < \"3.12\"\nrequests>=2\n"},
	{"[project]\ndependencies = [\n  \"a==1\",  # pinned\n  \"b\",\n]\n[project.optional-dependencies]\ndev = [\"pytest\"]\n", "a==1\nb\n"},
	{"project.dependencies = [\"a\"]\n", "a\n"},
	{"project = {name = \"x\", dependencies = [\"a\"]}\n", "a\n"},
	{"# c\r\n[project]\r\nname = 'x'\r\nversion = \"1.0\"\r\ndependencies = [\"a\"]\r\n", "a\n"},
	{"[project]\nname = \"demo\"\nversion = \"0.1.0\"\ndescription = \"\"\"\nA skill's\n  scripts \\\n   here\"\"\"\nreadme = \"README.md\"\n" +
		"requires-python = \">=3.9\"\nlicense = {text = \"MIT\"}\nauthors = [{name = \"A\", email = \"a@example.com\"}]\n" +
		"classifiers = [\n  \"Programming Language :: Python :: 3\",\n]\ndependencies = [\"pypdf>=3.0\", \"openpyxl\"]\n" +
		"[project.scripts]\ndemo = \"demo:main\"\n[tool.black]\nline-length = 88\nskip = true\nratio = 1.5e3\n[[tool.x.y]]\na = -1\n[[tool.x.y]]\na = +2\n" +
		"[tool.setuptools.packages.find]\nwhere = [\"src\"]\n\"quoted key\".'lit' = 'C:\\path'\n", "openpyxl\npypdf>=3.0\n"},
	{"[a.b.c]\n[a]\nx = 1\n[project]\ndependencies = []\n", ""},
	{"[project]\ndynamic = [\"version\"]\ndependencies = [\"a\"]\n", "a\n"},
	{"s = \"\\u00e9\\t\\\"\"\nm = '''x'''\nq = \"\"\"a\"\"\"\"\n[project]\ndependencies = [\"a\" ,\"b\"\n]\n", "a\nb\n"},
}

func TestParsePyproject(t *testing.T) {
	for _, tt := range pyprojectDocs {
		reqs, dynamic, err := ParsePyproject("pyproject.toml", []byte(tt.doc))
		if err != nil || dynamic {
			t.Errorf("%.60q: %v (dynamic %v)", tt.doc, err, dynamic)
			continue
		}
		if got := string(Normalise(reqs)); got != tt.want {
			t.Errorf("%.60q: got %q, want %q", tt.doc, got, tt.want)
		}
	}
}

// pyprojectRefused are documents the reader refuses, with the error it
// gives.
var pyprojectRefused = []struct{ doc, want string }{
	{"[project]\ndependencies = [\"a @ https://x/a.whl\"]\n", "pyproject.toml:2: project.dependencies: URLs and paths"},
	{"[project]\ndependencies = [\n\"a\",\n\"-e .\"]\n", "pyproject.toml:4: project.dependencies: \"-e .\": options"},
	{"[project]\ndependencies = [\"a\", \"A\"]\n", "pyproject.toml:2: project.dependencies: a is already required on line 2"},
	{"[project]\ndependencies = [\"a\", 1]\n", "project.dependencies: not a string"},
	{"[project]\ndependencies = \"a\"\n", ":2: project.dependencies is not an array of strings"},
	{"[[project.dependencies]]\n", "not an array of strings"},
	{"project = 1\n", "project is not a table"},
	{"[project]\ndynamic = [\"dependencies\"]\ndependencies = [\"a\"]\n", ":3: project.dependencies is also listed in project.dynamic"},
	{"[project]\ndependencies = [\"a\"]\ndependencies = [\"b\"]\n", ":3: dependencies is already defined on line 2"},
	{"[project]\n[project]\n", ":2: [project]: already defined on line 1"},
	{"[project]\ndependencies = [\"a\"]\n[tool]\nd = 1979-05-27\n", ":4: value \"1979-05-27\": dates"},
	{"x = 0x10\n", "hexadecimal"},
	{"x = inf\n", "inf and nan"},
	{"x = 01\n", "not supported"},
	{"x = 1 y = 2\n", ":1: unexpected 'y' after the value"},
	{"x = \"a\nb\"\n", ":1: unclosed string"},
	{"x = \"\\q\"\n", "escape \"\\\\q\""},
	{"x = \"\\uD800\"\n", "not a Unicode scalar value"},
	{"x = '''a\n", "unclosed multi-line string"},
	{"x = [1,\n2\n", "unclosed array"},
	{"x = {a = 1,\nb = 2}\n", ":1: want a key"},
	{"x = {a = 1}\n[x.b]\n", "cannot be extended"},
	{"a.b = 1\n[a]\n", "[a]: already defined on line 1"},
	{"[a.b]\n[a]\nb.c = 1\n", ":3: b is already defined on line 1 and cannot be extended here"},
	{"a = [{}]\n[[a]]\n", "not as an array of tables"},
	{"x = \"\x01\"\n", "control character"},
	{"x = 1 # \x01\n", "control character in a comment"},
	{"x = 1\ry = 2\n", "carriage return"},
	{"\n\nx = \"\xff\"\n", "pyproject.toml:3: invalid UTF-8"},
	{strings.Repeat("[", 40) + "\n", "want a key"},
	{"x = " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n", "nested deeper than 32"},
	{"x = [" + strings.Repeat("0,", 100001) + "]\n", "more than 100000 values"},
	{strings.Repeat("#", MaxRequirementsBytes+1), ":0: file is larger than"},
}

func TestParsePyprojectRefused(t *testing.T) {
	for _, tt := range pyprojectRefused {
		_, _, err := ParsePyproject("pyproject.toml", []byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.60q: error %v, want %q", tt.doc, err, tt.want)
		}
	}
}

// TestPyprojectKey: the same requirements give the same key whichever
// file holds them.
func TestPyprojectKey(t *testing.T) {
	deps := "[project]\ndependencies = [\"a>=1\"]\n"
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, "pyproject.toml"), []byte(deps), 0o644)
	os.WriteFile(filepath.Join(b, "requirements.txt"), []byte("A >= 1 # c\n"), 0o644)
	da, err1 := Load(a)
	db, err2 := Load(b)
	py := Python{Path: "/usr/bin/python3", Version: "Python 3"}
	if err1 != nil || err2 != nil || Key(da, py) != Key(db, py) {
		t.Errorf("pyproject.toml and requirements.txt of the same requirements: %v %v, keys differ", err1, err2)
	}
}

// FuzzParsePyproject: no panic, and what is accepted normalises to a
// requirements file that parses to the same normal form.
func FuzzParsePyproject(f *testing.F) {
	for _, d := range pyprojectDocs {
		f.Add([]byte(d.doc))
	}
	for _, d := range pyprojectRefused[:len(pyprojectRefused)-2] {
		f.Add([]byte(d.doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, _, err := ParsePyproject("f", data)
		if err != nil {
			return
		}
		checkNormalForm(t, reqs)
	})
}

// TestTOMLAgainstTomllib reads every document of the tests and the fuzz
// corpus with Python's tomllib too: what this reader accepts, tomllib
// must accept with the same values (it may refuse more).
func TestTOMLAgainstTomllib(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import tomllib").Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3 with tomllib (3.11+) is needed: %v", err)
		}
		t.Skipf("no python3 with tomllib (3.11+): %v", err)
	}
	var docs []string
	for _, d := range pyprojectDocs {
		docs = append(docs, d.doc)
	}
	for _, d := range pyprojectRefused[:len(pyprojectRefused)-3] {
		docs = append(docs, d.doc)
	}
	docs = append(docs, fuzzCorpus(t, "FuzzParsePyproject")...)
	in, _ := json.Marshal(docs)
	cmd := exec.Command(py, "-c", `import json, sys, tomllib
out = []
for d in json.load(sys.stdin):
    try:
        v = tomllib.loads(d)
        try:
            json.dumps(v, default=str, allow_nan=False)
        except ValueError:
            v = "inf or nan"
        out.append({"ok": True, "v": v})
    except Exception as e:
        out.append({"ok": False, "err": str(e)})
print(json.dumps(out, default=str))`)
	cmd.Stdin = bytes.NewReader(in)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	var want []struct {
		OK  bool
		V   any
		Err string
	}
	if err := json.Unmarshal(outb, &want); err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for i, d := range docs {
		root, err := parseTOML("f", []byte(d))
		if err != nil {
			continue
		}
		accepted++
		if !want[i].OK {
			t.Errorf("%.80q: accepted, tomllib refuses: %s", d, want[i].Err)
			continue
		}
		if got := plainTOML(root); !reflect.DeepEqual(got, want[i].V) {
			t.Errorf("%.80q: read as %v, tomllib reads %v", d, got, want[i].V)
		}
	}
	t.Logf("%d documents, %d accepted and compared", len(docs), accepted)
}

// plainTOML returns v as encoding/json would decode tomllib's reading.
func plainTOML(v *tomlValue) any {
	switch v.kind {
	case 's':
		return v.str
	case 'a':
		out := []any{}
		for _, e := range v.arr {
			out = append(out, plainTOML(e))
		}
		return out
	case 't':
		out := map[string]any{}
		for k, e := range v.tab {
			out[k] = plainTOML(e)
		}
		return out
	}
	if v.str == "true" || v.str == "false" {
		return v.str == "true"
	}
	f, _ := strconv.ParseFloat(strings.ReplaceAll(v.str, "_", ""), 64)
	return f
}

// fuzzCorpus returns the inputs of testdata/fuzz/NAME.
func fuzzCorpus(t *testing.T, name string) []string {
	entries, _ := os.ReadDir(filepath.Join("testdata", "fuzz", name))
	var out []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", "fuzz", name, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		// go test fuzz v1\n[]byte("...")
		_, lit, ok := strings.Cut(string(data), "[]byte(")
		if !ok {
			continue
		}
		s, err := strconv.Unquote(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(lit), ")")))
		if err == nil {
			out = append(out, s)
		}
	}
	return out
}
