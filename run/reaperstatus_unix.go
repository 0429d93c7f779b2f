//go:build linux || darwin

package run

import (
	"encoding/binary"
	"syscall"
	"time"
)

// reportLen is the size of the reaper's report on statusFD: the script's
// wait status (4 bytes), then the user and system CPU time in microseconds
// and the peak resident set size in KiB (8 bytes each) of every process of
// the run, the reaper included, all big-endian.
const reportLen = 4 + 3*8

// reaperReport is what the reaper (PID 1 of the run's PID namespace) sends
// once the script and every other process of the run have exited and been
// reaped, just before it exits itself.
type reaperReport struct {
	status       syscall.WaitStatus
	user, system time.Duration
	maxRSSKiB    int64
}

// appendReport encodes r as the reaper sends it.
func appendReport(b []byte, r reaperReport) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(r.status))
	b = binary.BigEndian.AppendUint64(b, uint64(r.user/time.Microsecond))
	b = binary.BigEndian.AppendUint64(b, uint64(r.system/time.Microsecond))
	return binary.BigEndian.AppendUint64(b, uint64(r.maxRSSKiB))
}

// parseReport decodes a report of exactly reportLen bytes.
func parseReport(msg []byte) reaperReport {
	return reaperReport{
		status:    syscall.WaitStatus(binary.BigEndian.Uint32(msg)),
		user:      time.Duration(binary.BigEndian.Uint64(msg[4:])) * time.Microsecond,
		system:    time.Duration(binary.BigEndian.Uint64(msg[12:])) * time.Microsecond,
		maxRSSKiB: int64(binary.BigEndian.Uint64(msg[20:])),
	}
}
