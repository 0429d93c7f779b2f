package prepare

import (
	"strings"
	"testing"
)

const hashA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func TestParseRequirementsAccepted(t *testing.T) {
	tests := []struct {
		in   string
		want string // Normalise's output
	}{
		{"", ""},
		{"# only a comment\n\n", ""},
		{"Demo_Pkg\n", "demo-pkg\n"},
		{"demo.pkg >= 1.0 , < 2  # why\n", "demo-pkg>=1.0,<2\n"},
		{"b==1\na[Y, x]~=2.1\n", "a[x,y]~=2.1\nb==1\n"},
		{"pkg==1.0 ; python_version >= \"3.8\"\n", "pkg==1.0 ; python_version >= \"3.8\"\n"},
		{"pkg==1.0 \\\n    --hash=sha256:" + strings.ToUpper(hashA) + "\r\n", "pkg==1.0 --hash=sha256:" + hashA + "\n"},
		{"pkg (==1.0)\n", "pkg==1.0\n"},
	}
	for _, tt := range tests {
		reqs, err := ParseRequirements("requirements.txt", []byte(tt.in))
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if got := string(Normalise(reqs)); got != tt.want {
			t.Errorf("%q: normalised %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseRequirementsRefused(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"-e .\n", "requirements.txt:1: editable requirements (-e)"},
		{"ok\n-r other.txt\n", "requirements.txt:2: includes (-r, -c)"},
		{"--index-url https://evil.example/simple\n", "the package index is the operator's choice"},
		{"--extra-index-url=https://evil.example/simple\n", "--extra-index-url: the package index"},
		{"--pre\n", `option "--pre" is not supported`},
		{"https://evil.example/x.whl\n", "URLs and paths are not supported"},
		{"pkg @ https://evil.example/x.whl\n", "URLs and paths are not supported"},
		{"./local\n", `"./local" is not a project name`},
		{"pkg==1.0 --hash=md5:abc\n", "only --hash=sha256:HEX"},
		{"pkg==1.0 --hash=sha256:abc\n", "only --hash=sha256:HEX"},
		{"--hash=sha256:" + hashA + "\n", "--hash must follow a requirement"},
		{"pkg=1.0\n", "version specifier \"=1.0\""},
		{"pkg[a\n", "unclosed ["},
		{"a\n\nA\n", "requirements.txt:3: a is already required on line 1"},
		{"pkg\x00\n", "control character"},
		{"pkg ; python_version < \"3\" and `id`\n", "environment marker"},
		{"pkg==1.0 --install-option=--prefix=/\n", "only --hash=sha256:HEX"},
		{strings.Repeat("x", MaxRequirementsBytes+1), "larger than"},
	}
	for _, tt := range tests {
		_, err := ParseRequirements("requirements.txt", []byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%.40q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestHasHashes(t *testing.T) {
	reqs, err := ParseRequirements("r", []byte("a==1 --hash=sha256:"+hashA+"\nb\n"))
	if err != nil || !HasHashes(reqs) {
		t.Fatalf("%v %v", reqs, err)
	}
	reqs, _ = ParseRequirements("r", []byte("a==1\n"))
	if HasHashes(reqs) {
		t.Error("no hash, HasHashes true")
	}
}

// FuzzParseRequirements: no panic, bounded output, and what is accepted
// normalises to a file that parses to the same normal form.
func FuzzParseRequirements(f *testing.F) {
	for _, s := range []string{"", "pkg\n", "a[x]>=1,<2 ; python_version>'3' --hash=sha256:" + hashA + "\n",
		"-e .\n", "x \\\n --hash=sha256:" + hashA, "# c\nA_b.c===1!2+x\n", "pkg @ file:///x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, err := ParseRequirements("f", data)
		if err != nil {
			return
		}
		checkNormalForm(t, reqs)
	})
}

// checkNormalForm fails unless the normal form of reqs parses as a
// requirements file to the same normal form.
func checkNormalForm(t *testing.T, reqs []Requirement) {
	norm := Normalise(reqs)
	again, err := ParseRequirements("f", norm)
	if err != nil {
		t.Fatalf("normal form %q refused: %v", norm, err)
	}
	if got := Normalise(again); string(got) != string(norm) {
		t.Fatalf("normal form not stable: %q then %q", norm, got)
	}
}
