package main

import (
	"bytes"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// v8ReserveFailed is what V8 prints (node 18 to 24) when the address space
// it reserves at start-up does not fit under RLIMIT_AS.
const v8ReserveFailed = "Failed to reserve virtual memory for CodeRange"

// nodeAddressSpaceHint returns a line that names the way out when node,
// started by the script itself rather than as its interpreter, could not
// start under the plain RLIMIT_AS of --memory: that happens where no
// cgroup caps the run, which would relax the limit for the whole tree
// (docs/run.md, node). It returns "" when the run had node's allowance
// (AddressSpaceMB above memoryMB) or V8 did not report the failure.
func nodeAddressSpaceHint(res *run.Result, memoryMB int) string {
	if res.AddressSpaceMB == 0 || res.AddressSpaceMB > memoryMB || !bytes.Contains(res.Stderr.Captured, []byte(v8ReserveFailed)) {
		return ""
	}
	return fmt.Sprintf("skill-sandbox: hint: node could not reserve its address space under RLIMIT_AS (%d MiB, no cgroup caps this run): a script that starts node itself needs --memory %d (node's 1 GiB allowance added)", res.AddressSpaceMB, memoryMB+1024)
}
