package run

// SharedQuota is a per-user kernel counter a run's processes were charged
// on a host uid that others share (Result.SharedQuotas).
type SharedQuota struct {
	Counter string // QuotaEpollWatches
	UID     int    // the host uid charged: the caller's, or 65534
	Bound   string // BoundRunBudget, BoundMemoryCgroup or BoundNone
	// Budget is, with BoundRunBudget, the additions the run was allowed
	// (Sandbox.MaxEpollWatches).
	Budget int
}

// Counters and bounds of a SharedQuota.
const (
	// QuotaEpollWatches is fs.epoll.max_user_watches, counted per host
	// user (user_struct) in no namespace, and bounded by no rlimit.
	QuotaEpollWatches = "epoll_watches"
	// BoundRunBudget: the supervisor counted the run's epoll_ctl
	// additions (a seccomp listener) and refused those past Budget with
	// ENOSPC, so the run held at most Budget watches.
	BoundRunBudget = "run_budget"
	// BoundMemoryCgroup: each watch is charged to the run's memory
	// cgroup, so the run holds at most its memory limit's worth.
	BoundMemoryCgroup = "memory_cgroup"
	// BoundNone: nothing of the run's own bounds it; the run can take
	// all of the uid's quota for as long as it lasts.
	BoundNone = "none"
)
