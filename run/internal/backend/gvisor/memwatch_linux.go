package gvisor

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// watchMemory holds container id's sandbox to limit bytes as gVisor's
// kernel accounts them (runsc events --stats, with the global flags):
// past it, it reports watch.Memory to wd, which ends the run. It
// returns then, or when stop is closed.
func (r *Runtime) watchMemory(global []string, id string, limit int64, wd *backend.Watchdog, stop <-chan struct{}) {
	if limit <= 0 {
		return
	}
	for {
		next := 4 * watchMinEvery // before the sandbox is up, runsc knows no container
		if used, err := r.memoryUsage(global, id); err == nil {
			if used > limit {
				wd.Exceeded(watch.Memory)
				return
			}
			next = min(max(time.Duration(float64(limit-used)/watchRate*float64(time.Second)), watchMinEvery), watchMaxEvery)
		}
		select {
		case <-stop:
			return
		case <-time.After(next):
		}
	}
}

// memoryUsage asks runsc for the memory gVisor's kernel accounts to
// container id's sandbox, in bytes.
func (r *Runtime) memoryUsage(global []string, id string) (int64, error) {
	cmd := exec.Command(r.Path, append(global, "events", "--stats", id)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	var ev struct {
		Data struct {
			Memory struct {
				Usage struct {
					Usage *int64 `json:"usage"`
				} `json:"usage"`
			} `json:"memory"`
		} `json:"data"`
	}
	derr := json.NewDecoder(io.LimitReader(out, 64<<10)).Decode(&ev)
	if derr != nil {
		cmd.Process.Kill()
	}
	werr := cmd.Wait()
	switch {
	case derr != nil:
		return 0, derr
	case werr != nil:
		return 0, werr
	case ev.Data.Memory.Usage.Usage == nil:
		return 0, fmt.Errorf("runsc events: no memory usage")
	}
	return *ev.Data.Memory.Usage.Usage, nil
}
