package run

// ExecInitIfRequested does nothing on Windows: there is no init process.
func ExecInitIfRequested() {}
