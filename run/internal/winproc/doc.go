// Package winproc is the script's process on Windows: the argv and the
// command line that start it, its environment, and the Job Object that
// holds it and everything it starts.
//
// For most uses: Argv picks the interpreter of a script and builds its
// argv, CommandLine turns an argv into the one string CreateProcess
// takes, Env builds the script's environment, NewJob makes a Job Object
// with a run's Limits, Adopt puts a process created suspended in it and
// resumes it, and CPUTime and PeakMemory read the job's totals.
//
// A Windows process receives one string, not an argv; each program splits
// it itself. Programs built with the Microsoft C runtime (python, node,
// powershell) follow the CommandLineToArgvW rules, which msvcrtQuote
// inverts. cmd.exe, which runs .cmd and .bat files, has rules of its own
// (quotes toggle, %VAR% expands even inside quotes), the classic injection
// ("BatBadBut"); batchCommandLine refuses what it cannot quote.
//
// It runs in the supervisor. Argv, CommandLine, Env and Limits are pure
// Go, so that they are tested on every platform; the Job Object calls
// (job_windows.go) exist only on Windows.
package winproc
