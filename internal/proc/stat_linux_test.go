package proc

import "testing"

// FuzzParseStatFields checks that a process's chosen name cannot change
// the fields read after it: the session id, which tells the run's
// processes apart without a PID namespace.
func FuzzParseStatFields(f *testing.F) {
	for _, name := range []string{"python3", "a) S 1 1 1", ")", "((", "x\n) R 9 9 9", ""} {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 15 {
			name = name[:15] // TASK_COMM_LEN - 1
		}
		line := []byte("4242 (" + name + ") S 17 4242 777 0 -1 4194560 100 0 0 0\n")
		f := parseStatFields(line)
		if len(f) < 4 || f[0] != "S" || f[1] != "17" || f[3] != "777" {
			t.Fatalf("name %q: fields %q", name, f)
		}
	})
}
