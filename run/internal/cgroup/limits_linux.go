package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// cpuPeriod is the CPU bandwidth period for cpu.max (and cfs_period_us).
const cpuPeriod = 100 * time.Millisecond

// SetLimits writes lim into a cgroup made with higher ones (a pooled init
// process's, made before its run was known).
func (cg *Cgroup) SetLimits(lim Limits) error {
	if cg.version == 2 {
		return cg.setV2(lim)
	}
	for i, dir := range cg.dirs {
		if err := setV1(cg.ctrls[i], dir, lim); err != nil {
			return err
		}
	}
	return nil
}

// setV2 writes the limits of a v2 cgroup.
func (cg *Cgroup) setV2(lim Limits) error {
	dir := cg.dirs[0]
	if lim.MemoryBytes > 0 {
		if err := write(dir, "memory.max", strconv.FormatInt(lim.MemoryBytes, 10)); err != nil {
			return err
		}
		// No swap: without it the limit would only move memory to disk.
		// The file is missing when the kernel has no swap accounting,
		// which also means swap is not charged separately.
		if err := write(dir, "memory.swap.max", "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if lim.Pids > 0 {
		if err := write(dir, "pids.max", strconv.FormatInt(lim.Pids, 10)); err != nil {
			return err
		}
	}
	if lim.CPUs > 0 {
		quota, period := cpuQuota(lim.CPUs)
		if err := write(dir, "cpu.max", fmt.Sprintf("%d %d", quota, period)); err != nil {
			return err
		}
	}
	return nil
}

// setV1 writes the limits of controller c in its v1 cgroup dir.
func setV1(c, dir string, lim Limits) error {
	switch c {
	case "memory":
		v := strconv.FormatInt(lim.MemoryBytes, 10)
		if err := write(dir, "memory.limit_in_bytes", v); err != nil {
			return err
		}
		// memsw is memory plus swap: equal to the memory limit, no swap.
		// Without swap accounting it is missing; then keep anonymous
		// memory out of swap as far as the kernel allows.
		if err := write(dir, "memory.memsw.limit_in_bytes", v); errors.Is(err, os.ErrNotExist) {
			write(dir, "memory.swappiness", "0")
		} else if err != nil {
			return err
		}
	case "pids":
		return write(dir, "pids.max", strconv.FormatInt(lim.Pids, 10))
	case "cpu":
		quota, period := cpuQuota(lim.CPUs)
		if err := write(dir, "cpu.cfs_period_us", strconv.FormatInt(period, 10)); err != nil {
			return err
		}
		return write(dir, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
	}
	return nil
}

// cpuQuota turns a number of CPUs into a quota per cpuPeriod, both in
// microseconds, with the kernel's minimum quota of 1 ms.
func cpuQuota(cpus float64) (quota, period int64) {
	period = cpuPeriod.Microseconds()
	return max(int64(cpus*float64(period)), 1000), period
}
