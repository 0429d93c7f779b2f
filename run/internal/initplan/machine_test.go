//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// meminfoSample is the head of a real /proc/meminfo.
const meminfoSample = `MemTotal:       24683784 kB
MemFree:        20449580 kB
MemAvailable:   23887916 kB
Buffers:           10240 kB
Cached:          3000000 kB
SwapTotal:       1048576 kB
SwapFree:        1048576 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`

// TestShapeMeminfo checks meminfo as a machine of the run's memory shows
// it, and the refusal of text that is not meminfo's.
func TestShapeMeminfo(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		memKB      uint64
		want       map[string]string // key → the value's fields
		err        bool
	}{
		{"512 MiB", meminfoSample, 512 << 10, map[string]string{
			"MemTotal:": "524288 kB", "MemFree:": "434352 kB", "MemAvailable:": "524288 kB",
			"Buffers:": "217 kB", "Cached:": "63720 kB", "SwapTotal:": "0 kB", "SwapFree:": "0 kB",
			"HugePages_Total:": "0", "Hugepagesize:": "2048 kB",
		}, false},
		{"more than the host has", meminfoSample, 64 << 20, map[string]string{
			"MemTotal:": "24683784 kB", "MemFree:": "20449580 kB", "MemAvailable:": "23887916 kB", "Cached:": "3000000 kB",
		}, false},
		{"no MemTotal", "MemFree: 1 kB\n", 1024, nil, true},
		{"not meminfo", "hello world\n", 1024, nil, true},
		{"bad number", "MemTotal: x kB\n", 1024, nil, true},
		{"empty", "", 1024, nil, true},
	} {
		got, err := shapeMeminfo([]byte(tc.host), tc.memKB)
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want one: %v", tc.name, err, tc.err)
			continue
		}
		fields := map[string]string{}
		for line := range strings.Lines(got) {
			f := strings.Fields(line)
			fields[f[0]] = strings.Join(f[1:], " ")
		}
		for k, v := range tc.want {
			if fields[k] != v {
				t.Errorf("%s: %s %q, want %q\n%s", tc.name, k, fields[k], v, got)
			}
		}
	}
}

// TestShapeMeminfoHost checks the shape of this host's own meminfo.
func TestShapeMeminfoHost(t *testing.T) {
	host, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skipf("no /proc/meminfo: %v", err)
	}
	got, err := shapeMeminfo(host, 300<<10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "MemTotal:         307200 kB\n") || strings.Count(got, "\n") != strings.Count(string(host), "\n") {
		t.Errorf("shaped:\n%s", got)
	}
}

// cpuinfoSample is /proc/cpuinfo of three x86 CPUs, shortened.
const cpuinfoSample = "processor\t: 0\nmodel name\t: X\n\nprocessor\t: 1\nmodel name\t: X\n\nprocessor\t: 2\nmodel name\t: X\n\n"

// statSample is /proc/stat of three CPUs, shortened.
const statSample = "cpu  30 0 60 900\ncpu0 10 0 20 300\ncpu1 10 0 20 300\ncpu2 10 0 20 300\nintr 1 2\nctxt 5\nbtime 17\n"

// TestFilterCPUInfo and TestFilterStat check the CPU files as the run's
// CPUs show them.
func TestFilterCPUInfo(t *testing.T) {
	for _, tc := range []struct {
		name, host string
		cpus       []int
		want       string
	}{
		{"one of three", cpuinfoSample, []int{1}, "processor\t: 1\nmodel name\t: X\n\n"},
		{"two of three", cpuinfoSample, []int{0, 2}, "processor\t: 0\nmodel name\t: X\n\nprocessor\t: 2\nmodel name\t: X\n\n"},
		{"arm64 trailer stays", "processor\t: 0\nBogoMIPS\t: 1\n\nprocessor\t: 1\nBogoMIPS\t: 1\n\nHardware\t: Y\n", []int{0}, "processor\t: 0\nBogoMIPS\t: 1\n\nHardware\t: Y\n\n"},
		{"empty", "", []int{0}, ""},
	} {
		if got := filterCPUInfo([]byte(tc.host), tc.cpus); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFilterStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpus []int
		want string
	}{
		{"one", []int{2}, "cpu  10 0 20 300\ncpu2 10 0 20 300\nintr 1 2\nctxt 5\nbtime 17\n"},
		{"two", []int{0, 1}, "cpu  20 0 40 600\ncpu0 10 0 20 300\ncpu1 10 0 20 300\nintr 1 2\nctxt 5\nbtime 17\n"},
	} {
		if got := filterStat([]byte(statSample), tc.cpus); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzMachineFiles checks that no input makes the /proc parsers panic,
// and that a shaped meminfo never shows an amount of memory larger than
// the run's.
func FuzzMachineFiles(f *testing.F) {
	f.Add([]byte(meminfoSample))
	f.Add([]byte(cpuinfoSample))
	f.Add([]byte(statSample))
	f.Add([]byte("cpu99999999999999999999 1\ncpuX 2\ncpu\n"))
	f.Fuzz(func(t *testing.T, host []byte) {
		filterCPUInfo(host, []int{0, 3})
		filterStat(host, []int{0, 3})
		s, err := shapeMeminfo(host, 1024)
		if err != nil {
			return
		}
		for line := range strings.Lines(s) {
			f := strings.Fields(line)
			if len(f) != 3 || f[2] != "kB" || f[0] == "Hugepagesize:" || strings.HasPrefix(f[0], "Vmalloc") || strings.HasPrefix(f[0], "DirectMap") {
				continue
			}
			if v, err := strconv.ParseUint(f[1], 10, 64); err != nil || v > 1024 {
				t.Fatalf("line %q shows more than 1024 kB", line)
			}
		}
	})
}

// TestRandomUUID checks boot_id's shape: a version 4, variant 1 UUID
// and a newline, different at each call.
func TestRandomUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\n$`)
	seen := map[string]bool{}
	for range 8 {
		u := randomUUID()
		if !re.MatchString(u) {
			t.Fatalf("randomUUID() = %q, not a version 4 UUID line", u)
		}
		if seen[u] {
			t.Fatalf("randomUUID() repeated %q", u)
		}
		seen[u] = true
	}
}

// TestMeminfoLine compares meminfoLine with the format it replaces.
func TestMeminfoLine(t *testing.T) {
	for _, tc := range []struct {
		key string
		v   uint64
	}{
		{"MemTotal", 0}, {"MemTotal", 8029484}, {"Cached", 12345678}, {"Hugepagesize", 2048},
		{"FilePmdMapped", 123456789}, {"ThisKeyIsLongerThan16", 1}, {"K", 1<<64 - 1}, {"", 7},
	} {
		want := fmt.Sprintf("%-16s%8d kB\n", tc.key+":", tc.v)
		if got := meminfoLine(tc.key, tc.v); got != want {
			t.Errorf("meminfoLine(%q, %d) = %q; want %q", tc.key, tc.v, got, want)
		}
	}
}
