//go:build !linux

package run

// sharedQuotas is empty off Linux: the per-user counters it names are
// Linux's (macOS runs as the caller, with its own limits).
func sharedQuotas(*Result) []SharedQuota { return nil }
