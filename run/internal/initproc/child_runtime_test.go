//go:build linux && (amd64 || arm64)

package initproc

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// childCallees are the functions outside child*.go that the init
// process's code may call: the raw system call wrappers (no stack growth,
// no allocation), the runtime's memory copies (assembly that touches only
// its arguments), the stack check's morestack (never reached: the arena's
// stack is far from full, see cloneChild) and the index and slice bounds
// failures, which would end the init process (it has no runtime to
// panic with) and so refuse the run.
var childCallees = regexp.MustCompile(`^(syscall\.RawSyscall6?|internal/runtime/syscall/linux\.Syscall6|runtime\.(memmove|memclrNoHeapPointers|duffzero|duffcopy|morestack_noctxt|panicIndex\w*|panicSlice\w*|panicBounds\w*|goPanicIndex\w*|goPanicSlice\w*|panicshift|panicdivide))(\.abi0)?$`)

// TestChildCallsNoRuntime disassembles the functions of child*.go (the
// init process's code, which runs without a Go runtime) and checks that
// they call nothing but each other and childCallees, make no indirect
// call, and touch no writable global (data and bss are not mapped in the
// init process; a write barrier would read one).
func TestChildCallsNoRuntime(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build and disassemble with")
	}
	t.Run("plain", func(t *testing.T) { checkChildCode(t) })
	// The race detector instruments memory accesses and turns some
	// built-ins (copy) into runtime calls that it checks: a program of
	// a library user's tested with -race runs this code too.
	t.Run("race", func(t *testing.T) {
		if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
			t.Skip("-race needs cgo, which is off here")
		}
		checkChildCode(t, "-race")
	})
}

// checkChildCode is TestChildCallsNoRuntime for a test binary built with
// flags.
func checkChildCode(t *testing.T, flags ...string) {
	// This test binary has no symbol table (go test strips it), which
	// naming the globals takes: build one that has.
	exe := filepath.Join(t.TempDir(), "initproc.test")
	args := append(append([]string{"test", "-c", "-o", exe}, flags...), ".")
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	kinds := symbolKinds(t, exe)
	out, err := exec.Command("go", "tool", "objdump", "-s", `initproc\.`, exe).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	textRe := regexp.MustCompile(`^TEXT (\S+)\(SB\) (\S+)$`)
	symRe := regexp.MustCompile(`([\w./*()\[\]-]+)\(SB\)`)
	child := map[string]bool{}
	type ins struct{ fn, line string }
	var body []ins
	fn := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := textRe.FindStringSubmatch(line); m != nil {
			fn = ""
			if strings.HasPrefix(filepath.Base(m[2]), "child") && !strings.HasSuffix(m[2], "_test.go") {
				fn = m[1]
				child[fn] = true
			}
			continue
		}
		if fn != "" {
			body = append(body, ins{fn, line})
		}
	}
	if len(child) < 10 {
		t.Fatalf("found %d functions of child*.go in the disassembly", len(child))
	}
	for _, in := range body {
		// file:line, address, bytes, instruction
		var fields []string
		for _, f := range strings.Split(in.line, "\t") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		if len(fields) < 4 {
			continue
		}
		asm := fields[3]
		op := strings.Fields(asm)
		if len(op) == 0 {
			continue
		}
		isCall := op[0] == "CALL" || op[0] == "BL"
		for _, m := range symRe.FindAllStringSubmatch(asm, -1) {
			sym := m[1]
			switch {
			case isCall:
				if !child[sym] && !childCallees.MatchString(sym) {
					t.Errorf("%s calls %s", in.fn, sym)
				}
			case strings.ContainsAny(kinds[sym], "DdBb"):
				t.Errorf("%s uses the writable global %s", in.fn, sym)
			}
		}
		if isCall && !strings.Contains(asm, "(SB)") {
			t.Errorf("%s makes an indirect call: %s", in.fn, asm)
		}
	}
}

// symbolKinds maps the symbols of exe to their go tool nm kind (T text,
// R read-only data, D data, B bss).
func symbolKinds(t *testing.T, exe string) map[string]string {
	// nm may exit 1 after printing every symbol (a symbol it cannot
	// place); what it printed is all there is.
	out, err := exec.Command("go", "tool", "nm", exe).Output()
	if len(out) == 0 {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("nm: %v: %s", err, stderr)
	}
	kinds := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 {
			kinds[f[2]] = f[1]
		}
	}
	return kinds
}
