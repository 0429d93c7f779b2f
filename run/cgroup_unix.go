//go:build linux || darwin

package run

// setupCgroup creates the run's cgroup and moves the freshly started init
// stage (which waits for its config) into it. The outcome is recorded in
// st: LayerCgroup in st.supervised, or a Missing with the reason. With the
// cgroup's memory limit in force, RLIMIT_AS is relaxed (see
// relaxAddressSpace). It returns nil when there is no cgroup.
func setupCgroup(p *plan, st *started, res *Result) *runCgroup {
	if has(p.disabled, LayerCgroup) {
		return nil
	}
	cg, err := openCgroup(cgroupName(p.requestID), p.cgroup)
	if err == nil {
		if err = cg.attach(st.cmd.Process.Pid); err != nil {
			cg.close()
			cg = nil
		}
	}
	if err != nil {
		st.missing = append(st.missing, Missing{Layer: LayerCgroup, Reason: err.Error()})
		return nil
	}
	st.supervised = append(st.supervised, LayerCgroup)
	relaxAddressSpace(p, res)
	return cg
}

// relaxAddressSpace applies the RLIMIT_AS rule under a cgroup memory limit:
// the cgroup then caps the real memory of the whole tree, so RLIMIT_AS
// only has to stop absurd single allocations early (a clear MemoryError
// instead of an OOM kill). Every process gets MemoryMB plus the node
// allowance, so that node started from a shell or Python script (which
// inherits the shell's limit) starts as well as node run directly.
func relaxAddressSpace(p *plan, res *Result) {
	relaxed := uint64(p.memoryMB+nodeReserveMB) << 20
	if p.cfg.Limits.AddressSpace > 0 && p.cfg.Limits.AddressSpace < relaxed {
		p.cfg.Limits.AddressSpace = relaxed
		res.AddressSpaceMB = int(relaxed >> 20)
	}
}

// finishCgroup records the cgroup's peak memory and OOM kills in res, then
// kills whatever is left in it and removes it.
func finishCgroup(cg *runCgroup, res *Result) {
	if cg == nil {
		return
	}
	st := cg.stats()
	res.PeakMemoryKB = st.PeakBytes >> 10
	res.OOMKills = int(st.OOMKills)
	cg.close()
}
