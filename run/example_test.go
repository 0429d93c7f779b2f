package run_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// A program that runs skills calls ExecInitIfRequested first in main, then
// describes the sandbox and runs one script.
func ExampleSandbox_Run() {
	run.ExecInitIfRequested()

	sb := &run.Sandbox{
		SkillDir:   "testdata/example/word-stats",
		Timeout:    10 * time.Second,
		MemoryMB:   256,
		UseWorkDir: true,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		Warnings:   os.Stderr,
	}
	res, err := sb.Run(context.Background(), "stats.py", []string{"references/sample.txt"})
	// The sandbox is torn down in the background; a program that exits
	// next waits for that, so it leaves no cgroup behind.
	defer res.WaitCleanup()
	switch {
	case errors.Is(err, run.ErrInvalidSkill):
		fmt.Println("refused:", err)
	case err != nil:
		fmt.Println("error:", err)
	default:
		fmt.Printf("exit %d after %s, layers %v\n", res.ExitCode, res.Duration, res.Applied)
	}
}

// A reviewer's view of what a run would set up, before it runs: the
// mounts, the Landlock rules, the seccomp filter and the limits, one
// step a line. Nothing is started.
func ExampleSandbox_Describe() {
	sb := &run.Sandbox{SkillDir: "testdata/example/word-stats", Timeout: 10 * time.Second}
	_, lines, err := sb.Describe("stats.py", []string{"references/sample.txt"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // ErrUnsupported off Linux
		return
	}
	for _, l := range lines {
		fmt.Println(l)
	}
}

// The default epoll budget of a run on a host uid shared with others:
// an eighth of the host's fs.epoll.max_user_watches, here that of a
// 24 GiB machine, and the floor on a small one.
func ExampleDefaultEpollWatches() {
	fmt.Println(run.DefaultEpollWatches(5491645))
	fmt.Println(run.DefaultEpollWatches(100000))
	// Output:
	// 686455
	// 32768
}
