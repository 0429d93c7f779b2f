//go:build linux || darwin

package stageconfig

import (
	"encoding/binary"
	"syscall"
	"time"
)

// ReaperReportLen is the size of the reaper's report on StatusFD: the script's
// wait status (4 bytes), then the user and system CPU time in microseconds
// and the peak resident set size in KiB (8 bytes each) of every process of
// the run, the reaper included, all big-endian.
const ReaperReportLen = 4 + 3*8

// ReaperReport is what the reaper (PID 1 of the run's PID namespace) sends
// once the script and every other process of the run have exited and been
// reaped, just before it exits itself.
type ReaperReport struct {
	Status       syscall.WaitStatus // the script's wait status
	User, System time.Duration      // CPU time of every process of the run
	MaxRSSKiB    int64              // the largest peak resident set size among them
}

// AppendReaperReport encodes r as the reaper sends it.
func AppendReaperReport(b []byte, r ReaperReport) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(r.Status))
	b = binary.BigEndian.AppendUint64(b, uint64(r.User/time.Microsecond))
	b = binary.BigEndian.AppendUint64(b, uint64(r.System/time.Microsecond))
	return binary.BigEndian.AppendUint64(b, uint64(r.MaxRSSKiB))
}

// ParseReaperReport decodes a report of exactly reportLen bytes.
func ParseReaperReport(msg []byte) ReaperReport {
	return ReaperReport{
		Status:    syscall.WaitStatus(binary.BigEndian.Uint32(msg)),
		User:      time.Duration(binary.BigEndian.Uint64(msg[4:])) * time.Microsecond,
		System:    time.Duration(binary.BigEndian.Uint64(msg[12:])) * time.Microsecond,
		MaxRSSKiB: int64(binary.BigEndian.Uint64(msg[20:])),
	}
}
