package watch

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// heldDeleted adds up the disk blocks of files on device dev that the
// processes hold open after their last name was removed (unlinked after
// opening, or O_TMPFILE): they take space until closed, yet no walk of
// the folder finds them. Each inode counts once. hidden is true when a
// process other than initProc (the init process, which opens no file of
// the run; -1 for none) keeps its descriptors from being read, as a
// process that is not dumpable does from an unprivileged supervisor
// without a user namespace: what it holds cannot be bounded, so the
// caller counts the cap as passed. in, when not nil, keeps the files
// whose former path (the descriptor's link) it accepts: on a device the
// work folder shares with a write grant, each file counts against the
// cap of the tree it was in.
func heldDeleted(pids []int, dev uint64, initProc int, in func(path string) bool) (total int64, hidden bool) {
	seen := map[uint64]bool{}
	for _, pid := range pids {
		fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
		f, err := os.Open(fdDir)
		if err != nil {
			if pid != initProc && errors.Is(err, os.ErrPermission) && holdsFiles(pid) {
				hidden = true
			}
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, name := range names {
			var st unix.Stat_t
			if unix.Stat(fdDir+"/"+name, &st) != nil {
				continue
			}
			if st.Dev != dev || st.Nlink != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG || seen[st.Ino] {
				continue
			}
			if in != nil {
				link, _ := os.Readlink(fdDir + "/" + name)
				if !in(strings.TrimSuffix(link, " (deleted)")) {
					continue
				}
			}
			seen[st.Ino] = true
			total += st.Blocks * 512
		}
	}
	return total, hidden
}

// holdsFiles reports whether process pid may still hold descriptors it
// can use: it is not a zombie (whose descriptors are closed, and whose
// /proc/PID/fd an unprivileged reader is refused all the same), nor a
// process in its exit past the release of its memory. /proc shows the
// latter as root's, so an unprivileged supervisor is refused its
// descriptors too, for the moment before the kernel closes them; it runs
// no more code. Taken for hidden, it stopped ordinary runs at their end
// (a matplotlib plot saved into a write grant, about one run in three, as
// uid 65534 without a cgroup).
func holdsFiles(pid int) bool {
	f := proc.StatFields(strconv.Itoa(pid))
	if len(f) == 0 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	statm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	return err == nil && statmHasMemory(statm)
}

// statmHasMemory reports whether a /proc/PID/statm line may show an
// address space: false only for a total size of 0, which the kernel
// prints for a process without one (exiting, or a zombie); anything it
// cannot read counts as memory, so that a doubt keeps the process hidden.
// statm is readable by every user whatever the process's owner or
// dumpable flag.
func statmHasMemory(statm []byte) bool {
	f := strings.Fields(string(statm))
	if len(f) == 0 {
		return true
	}
	size, err := strconv.ParseUint(f[0], 10, 64)
	return err != nil || size > 0
}
