package run_test

import (
	"context"
	"crypto/rand"
	"log"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// A server that gives each request a folder of its own (its write grant
// and working folder) lets its gvisor runs take pre-started sandboxes
// through slots: the request's folder is the slot of the sandbox it
// reserved, or a folder it makes when none waits.
func ExamplePool_ReserveSlot() {
	run.ExecInitIfRequested()

	work := "/srv/skills-work" // the requests' folders, symbolic links resolved
	newFolder := func() (string, error) {
		dir := filepath.Join(work, rand.Text())
		if err := os.Mkdir(dir, 0o755); err != nil {
			return "", err
		}
		// Writable by the scripts' identity (uid 65534 for a root caller).
		return dir, os.Chown(dir, 65534, 65534)
	}
	like := run.Sandbox{Backend: run.BackendGVisor}
	pool, err := run.NewPool(2, 0, like)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	pool.SetSlots(work, newFolder)

	// For each request:
	dir, ok := pool.ReserveSlot("skills/word-stats")
	if !ok {
		if dir, err = newFolder(); err != nil {
			log.Fatal(err)
		}
	}
	// Write the request's input files in dir (it must hold nothing else),
	// then run with dir as the write grant and working folder.
	if err := os.WriteFile(filepath.Join(dir, "input.txt"), []byte("hello\n"), 0o644); err != nil {
		pool.ReleaseSlot(dir) // the run will not come
		log.Fatal(err)
	}
	sb := like
	sb.SkillDir, sb.WritePaths, sb.Cwd, sb.Pool = "skills/word-stats", []string{dir}, dir, pool
	res, err := sb.Run(context.Background(), "stats.py", []string{"input.txt"})
	if err != nil {
		log.Fatal(err)
	}
	defer res.WaitCleanup()
}
