//go:build linux || darwin

package stageconfig

import (
	"encoding/binary"
	"syscall"
	"time"
)

// ReaperReportLen is the size of the init process's final report on
// StatusFD: the script's wait status (4 bytes), then the user and system
// CPU time in microseconds of every process of the run, the init process
// included, and the largest peak resident set size in KiB of the script
// and its descendants (8 bytes each), all big-endian.
const ReaperReportLen = 4 + 3*8

// ReaperReport is what the init process, reaping as the first process of
// the run's PID namespace (see run/internal/initproc's childSendStatus,
// which encodes it), sends once the script and every other process of the
// run have exited and been reaped, just before it exits itself.
type ReaperReport struct {
	Status       syscall.WaitStatus // the script's wait status
	User, System time.Duration      // CPU time of every process of the run
	MaxRSSKiB    int64              // the largest peak resident set size among them
}

// ParseReaperReport decodes a report of exactly ReaperReportLen bytes.
func ParseReaperReport(msg []byte) ReaperReport {
	return ReaperReport{
		Status:    syscall.WaitStatus(binary.BigEndian.Uint32(msg)),
		User:      time.Duration(binary.BigEndian.Uint64(msg[4:])) * time.Microsecond,
		System:    time.Duration(binary.BigEndian.Uint64(msg[12:])) * time.Microsecond,
		MaxRSSKiB: int64(binary.BigEndian.Uint64(msg[20:])),
	}
}
