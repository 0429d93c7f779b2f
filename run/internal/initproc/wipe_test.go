//go:build linux && (amd64 || arm64)

package initproc

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

func TestAnonymousMappings(t *testing.T) {
	maps := `00400000-005e1000 r-xp 00000000 00:1f 123 /usr/bin/x
007f8000-0082c000 rw-p 003f8000 00:1f 123 /usr/bin/x
0082c000-02862000 rw-p 00000000 00:00 0
0307e000-0309f000 rw-p 00000000 00:00 0                                  [heap]
c000000000-c000400000 rw-p 00000000 00:00 0
c000400000-c004000000 ---p 00000000 00:00 0
7f0000000000-7f0000001000 rw-s 00000000 00:01 77 /dev/zero (deleted)
7f0000002000-7f0000003000 rw-p 00000000 00:00 0                          [anon:go: heap]
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
7ffd00100000-7ffd00102000 r--p 00000000 00:00 0                          [vvar]
7ffd00102000-7ffd00104000 r-xp 00000000 00:00 0                          [vdso]
garbage
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
zz-10 rw-p 00000000 00:00 0
20-10 rw-p 00000000 00:00 0
`
	got := anonymousMappings([]byte(maps))
	want := [][2]uintptr{
		{0x0082c000, 0x02862000}, {0x0307e000, 0x0309f000}, {0xc000000000, 0xc000400000},
		{0x7f0000002000, 0x7f0000003000}, {0x7ffd00000000, 0x7ffd00021000},
	}
	if len(got) != len(want) {
		t.Fatalf("got %x, want %x", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %x, want %x", got, want)
		}
	}
}

// wipeFlag reports whether the mapping holding addr is marked
// MADV_WIPEONFORK ("wf" in its smaps VmFlags).
func wipeFlag(t *testing.T, addr uintptr) bool {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, l := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if lo, hi, ok := parseRange(f[0]); ok && len(f) >= 5 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && f[0] == "VmFlags:" {
			for _, fl := range f[1:] {
				if fl == "wf" {
					return true
				}
			}
			return false
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return false
}

// TestWipeWindow: inside the window the Go heap is marked not to be
// copied; once the last Start leaves, no mark is left on the process.
func TestWipeWindow(t *testing.T) {
	heap := make([]byte, 1<<20)
	addr := uintptr(unsafe.Pointer(&heap[0]))
	// The runtime's vgetrandom state, a MAP_DROPPABLE mapping the kernel
	// refuses madvise on, exists once crypto/rand has been used (as the
	// supervisor does for request ids) on Linux 6.11 and later.
	rand.Read(heap[:16])
	var w wipeWindow
	maps, err := proc.ReadFile("/proc/self/maps", maxMaps)
	if err != nil {
		t.Fatal(err)
	}
	w.enter(1, 2, maps)
	w.enter(3, 4, maps)
	if !wipeFlag(t, addr) {
		t.Fatal("the heap is not marked MADV_WIPEONFORK inside the window")
	}
	w.leave(1)
	if !wipeFlag(t, addr) {
		t.Fatal("the first Start to leave cleared the marks of another still inside")
	}
	w.leave(3)
	if wipeFlag(t, addr) {
		t.Fatal("the heap is still marked MADV_WIPEONFORK after the window")
	}
	// No mark is left anywhere but on the kernel's own wipe-on-fork
	// mappings (MAP_DROPPABLE, "dp": the runtime's vgetrandom state).
	if left := marksLeft(t); len(left) > 0 {
		t.Fatalf("mappings still marked MADV_WIPEONFORK after the window: %v", left)
	}
}

// marksLeft lists the mappings whose smaps VmFlags have "wf" but not "dp".
func marksLeft(t *testing.T) []string {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	var current string
	for _, l := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if _, _, ok := parseRange(f[0]); ok && len(f) >= 5 {
			current = l
			continue
		}
		if f[0] == "VmFlags:" && slices.Contains(f[1:], "wf") && !slices.Contains(f[1:], "dp") {
			left = append(left, current)
		}
	}
	return left
}

// TestChildHasNoHeap: the init process's memory holds nothing of the
// supervisor's heap, whether it could unmap it (without cgo) or not (with
// cgo, whose C library registers an rseq area): reading a secret at its
// address in the child fails or finds something else.
func TestChildHasNoHeap(t *testing.T) {
	secret := bytes.Repeat([]byte("supervisor-secret"), 4096)
	b := NewBuilder(0)
	b.Report(4, 3, WaitAlways)
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProg(t, 0, prog)
	readReport(t, s.repR) // it now waits for the go-ahead
	mem, err := os.Open("/proc/" + strconv.Itoa(s.pid) + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	got := make([]byte, len(secret))
	n, err := mem.ReadAt(got, int64(uintptr(unsafe.Pointer(&secret[0]))))
	s.cfgW.Close()
	s.wait(t)
	t.Logf("read %d bytes (%v), rseq taken: %v", n, err, rseqTaken(t))
	if n > 0 && bytes.Contains(got[:n], []byte("supervisor-secret")) {
		t.Fatal("the init process holds a copy of the supervisor's heap")
	}
}

// TestConcurrentStarts: Starts that overlap (a server's parallel runs)
// each fork a child that runs: no Start's window wipes another's arena.
func TestConcurrentStarts(t *testing.T) {
	b := NewBuilder(0)
	b.Report(4, 3, WaitNever)
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	once := func() error {
		cfgR, cfgW, err := os.Pipe()
		if err != nil {
			return err
		}
		defer cfgR.Close()
		defer cfgW.Close()
		repR, repW, err := os.Pipe()
		if err != nil {
			return err
		}
		defer repR.Close()
		defer repW.Close()
		pid, err := Start(&Attr{Files: []int{0, 1, 2, int(cfgR.Fd()), int(repW.Fd())}, ReportFD: 4})
		if err != nil {
			return err
		}
		defer func() {
			var ws unix.WaitStatus
			unix.Kill(pid, unix.SIGKILL)
			unix.Wait4(pid, &ws, 0, nil)
		}()
		repW.Close()
		if _, err := cfgW.Write(prog.Bytes); err != nil {
			return err
		}
		var rep Report
		buf := unsafe.Slice((*byte)(unsafe.Pointer(&rep)), unsafe.Sizeof(rep))
		if _, err := io.ReadFull(repR, buf); err != nil || !rep.Valid() {
			return fmt.Errorf("no report from the child (%v)", err)
		}
		return nil
	}
	errs := make(chan error, 8*25)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				errs <- once()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
