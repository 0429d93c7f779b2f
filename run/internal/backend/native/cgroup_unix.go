//go:build linux || darwin

package native

import (
	"errors"
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// The run's cgroup itself (where it comes from, its limits, the
// init process born inside it or joining it late, its removal) is
// run/internal/cgroup's; this is where a run's start and end call it.

// startInCgroup creates the run's cgroup and starts the init process
// (which waits for its config) inside it: born there where the kernel
// allows it (see cgroup.Cgroup.StartInside), else moved there right after
// the start. The outcome is recorded in the returned started: stageconfig.LayerCgroup
// in st.supervised, or a stageconfig.Missing with the reason. With the cgroup's
// memory limit in force, RLIMIT_AS is relaxed (see relaxAddressSpace).
// The cgroup is nil when there is none.
func startInCgroup(spec *launchSpec, l *Launch, out *backend.Outcome) (*started, *cgroup.Cgroup, error) {
	p := l.plan
	var st *started
	start := func() (err error) {
		st, err = startInit(spec, l)
		return err
	}
	if stageconfig.Has(p.Disabled, stageconfig.LayerCgroup) {
		err := start()
		return st, nil, err
	}
	// A cgroup placed late is made once the program is sent (see
	// cgroup.PlanLate); whatever ends the run before closes it, made or
	// not.
	cg, cgErr := l.lateCgroup, error(nil)
	if cg == nil {
		cg, cgErr = cgroup.Open(cgroup.Name(p.RequestID), p.Cgroup)
	}
	if cgErr != nil {
		if err := start(); err != nil {
			return nil, nil, err
		}
		st.missing = append(st.missing, stageconfig.Missing{Layer: stageconfig.LayerCgroup, Reason: cgErr.Error()})
		return st, nil, nil
	}
	closeHome := cg.PassHomeTasks(homeSlots(spec))
	inside, err := cg.StartInside(start)
	closeHome()
	if err != nil {
		cg.Close()
		return nil, nil, err
	}
	if !inside {
		if err := cg.Attach(st.proc.Pid()); err != nil {
			// Attach is all or nothing: the init process is in none of
			// the run's cgroups, unless it could not be moved back out.
			cg.Close()
			if errors.Is(err, cgroup.ErrHalfJoined) {
				return nil, nil, killHalfJoined(st.proc, err)
			}
			st.missing = append(st.missing, stageconfig.Missing{Layer: stageconfig.LayerCgroup, Reason: err.Error()})
			return st, nil, nil
		}
	}
	st.supervised = append(st.supervised, stageconfig.LayerCgroup)
	relaxAddressSpace(l, out)
	return st, cg, nil
}

// homeSlots is spec's share of the stageconfig.HomeTasksFD slots (see
// cgroup.Cgroup.PassHomeTasks); nil when it has none.
func homeSlots(spec *launchSpec) []*os.File {
	first := stageconfig.HomeTasksFD - stageconfig.ConfigFD
	if len(spec.extra) < first+stageconfig.HomeTasksSlots {
		return nil
	}
	return spec.extra[first : first+stageconfig.HomeTasksSlots]
}

// configChannel is the config channel of a fresh init process: a pipe,
// or with a cgroup it joins late a stream socket, which carries the
// "tasks" descriptors (see cgroup.LateChannel). sup is the supervisor's
// end.
func configChannel(late bool) (sup, stage *os.File, err error) {
	if !late {
		return posix.Pipe(true)
	}
	return cgroup.LateChannel()
}

// relaxAddressSpace applies the RLIMIT_AS rule where the run's real memory
// is held to MemoryMB by the cgroup, or by the watch when there is none:
// RLIMIT_AS then only has to stop absurd single allocations early (a clear
// MemoryError instead of a kill), and every process gets MemoryMB plus
// AddressReserveMB, so that programs that reserve far more address space than
// they use (threads, malloc arenas, node, a JVM) start as they do bare.
func relaxAddressSpace(l *Launch, out *backend.Outcome) {
	if relaxed := relaxedAddressSpace(l.plan); relaxed != l.cfg.Limits.AddressSpace {
		l.cfg.Limits.AddressSpace = relaxed
		out.AddressSpaceMB = int(relaxed >> 20)
	}
}

// AddressReserveMB is added to RLIMIT_AS where the cgroup or the watch holds
// the run's real memory to MemoryMB: what programs reserve without
// using (a thread's 8 MiB stack, glibc's 64 MiB malloc arenas, V8's
// pointer cage, a JVM's heap and class space sized from the host's
// memory) then costs nothing, and the limit only stops absurd single
// mappings early.
const AddressReserveMB = 16 << 10

// relaxedAddressSpace is the RLIMIT_AS of p's processes where the cgroup
// or the watch holds their memory (see relaxAddressSpace).
func relaxedAddressSpace(p *backend.Spec) uint64 {
	relaxed := uint64(p.MemoryMB+AddressReserveMB) << 20
	if p.Config.Limits.AddressSpace > 0 && p.Config.Limits.AddressSpace < relaxed {
		return relaxed
	}
	return p.Config.Limits.AddressSpace
}

// recordCgroupStats records the cgroup's peak memory and OOM kills in out.
func recordCgroupStats(cg *cgroup.Cgroup, out *backend.Outcome) {
	if cg == nil {
		return
	}
	st := cg.Stats()
	out.PeakMemoryKB = st.PeakBytes >> 10
	out.OOMKills = int(st.OOMKills)
}

// finishCgroup records the cgroup's peak memory and OOM kills in out, then
// kills whatever is left in it and removes it.
func finishCgroup(cg *cgroup.Cgroup, out *backend.Outcome) {
	if cg == nil {
		return
	}
	recordCgroupStats(cg, out)
	cg.Close()
}

// halfJoinedError is the error of a run whose init process Attach could
// not move back out of part of the run's cgroup (cgroup.ErrHalfJoined):
// it is killed rather than run in a half-configured cgroup.
func halfJoinedError(err error) error {
	return fmt.Errorf("the run's cgroup: %v; the init process was killed rather than run in a half-configured cgroup", err)
}

// killHalfJoined kills and reaps an init process that Attach left in part
// of a cgroup (err, cgroup.ErrHalfJoined): it has run nothing of a run
// yet, and must not run one half limited. It returns halfJoinedError(err).
func killHalfJoined(proc *posix.Process, err error) error {
	proc.Kill()
	proc.Wait()
	return halfJoinedError(err)
}
