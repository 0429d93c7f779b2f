package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Bits of /proc/kpageflags (Documentation/admin-guide/mm/pagemap.rst).
const (
	kpfCompoundHead = 1 << 15
	kpfCompoundTail = 1 << 16
	pagemapPFNMask  = 1<<55 - 1
	pagemapPresent  = 1 << 63
)

// cachedFolios reports how the page cache holds the file at path: how many
// of its pages are cached, and how many of those are parts of large
// folios. How the file was written decides it (see docs/bench.md,
// "What changed"): the Go linker writes its output through a shared mapping and
// leaves 4 KiB folios, a copy written by install(1) or cp is cached in
// large folios where the file system has them, and a file read back from
// disk by exec's page faults is in 4 KiB folios again. Only pages already
// cached are looked at (mincore), so the look reads nothing from disk.
// Reading the folio flags needs root (/proc/kpageflags).
func cachedFolios(path string) (cached, large int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, 0, err
	}
	size := int(st.Size())
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, 0, err
	}
	defer unix.Munmap(mem)
	page := os.Getpagesize()
	resident := make([]byte, (size+page-1)/page)
	// x/sys has no mincore wrapper.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(size), uintptr(unsafe.Pointer(&resident[0]))); errno != 0 {
		return 0, 0, fmt.Errorf("mincore %s: %w", path, errno)
	}
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, 0, err
	}
	defer pagemap.Close()
	flags, err := os.Open("/proc/kpageflags")
	if err != nil {
		return 0, 0, err
	}
	defer flags.Close()
	base := uintptr(unsafe.Pointer(&mem[0]))
	var word [8]byte
	var sink byte
	for i, r := range resident {
		if r&1 == 0 {
			continue
		}
		sink += mem[i*page] // map the cached page, so that pagemap has its frame
		if _, err := pagemap.ReadAt(word[:], int64((base/uintptr(page)+uintptr(i))*8)); err != nil {
			return 0, 0, err
		}
		entry := binary.LittleEndian.Uint64(word[:])
		if entry&pagemapPresent == 0 || entry&pagemapPFNMask == 0 {
			return 0, 0, fmt.Errorf("%s: no page frame numbers in /proc/self/pagemap (not root?)", path)
		}
		if _, err := flags.ReadAt(word[:], int64(entry&pagemapPFNMask)*8); err != nil {
			return 0, 0, err
		}
		cached++
		if binary.LittleEndian.Uint64(word[:])&(kpfCompoundHead|kpfCompoundTail) != 0 {
			large++
		}
	}
	runtime.KeepAlive(sink)
	return cached, large, nil
}
