package winproc

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                       int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime   int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses uint32
	TotalTerminatedProcesses                             uint32
}

// NewJob creates the run's Job Object: the job's committed memory, the
// number of live processes and each process's CPU time are capped; the
// job's processes die when its last handle closes (so also when the
// supervisor dies), die rather than show an error dialog, and may not
// touch the desktop, the clipboard, other processes' windows, system
// settings or the session (log off, shut down).
func NewJob(l Limits) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %v", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
		windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION | windows.JOB_OBJECT_LIMIT_JOB_MEMORY |
		windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_PROCESS_TIME
	info.BasicLimitInformation.ActiveProcessLimit = l.ActiveProcesses
	info.BasicLimitInformation.PerProcessUserTimeLimit = l.ProcessUserTime
	info.JobMemoryLimit = uintptr(l.JobMemoryBytes)
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("job limits: %v", err)
	}
	ui := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: windows.JOB_OBJECT_UILIMIT_DESKTOP |
		windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | windows.JOB_OBJECT_UILIMIT_EXITWINDOWS |
		windows.JOB_OBJECT_UILIMIT_GLOBALATOMS | windows.JOB_OBJECT_UILIMIT_HANDLES |
		windows.JOB_OBJECT_UILIMIT_READCLIPBOARD | windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD |
		windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("job UI restrictions: %v", err)
	}
	return job, nil
}

// Adopt opens the process pid, created suspended, puts it in job (unless
// job is 0) before it runs an instruction, and resumes it. It returns the
// process's handle; on an error nothing is left open, and the process,
// still suspended, is the caller's to kill.
func Adopt(job windows.Handle, pid int) (windows.Handle, error) {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME|
		windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return 0, err
	}
	if job != 0 {
		err = windows.AssignProcessToJobObject(job, h)
	}
	if err == nil {
		err = Resume(h)
	}
	if err != nil {
		windows.CloseHandle(h)
		return 0, err
	}
	return h, nil
}

// Resume resumes every thread of a process created suspended.
// CreateProcess's thread handle is not kept by os/exec, so the process is
// resumed as a whole (ntdll's NtResumeProcess).
func Resume(h windows.Handle) error {
	proc := windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")
	if err := proc.Find(); err != nil {
		return err
	}
	if status, _, _ := proc.Call(uintptr(h)); status != 0 {
		return fmt.Errorf("NtResumeProcess: NTSTATUS %#x", status)
	}
	return nil
}

// CPUTime returns the CPU time of every process the job has held, user
// and kernel; false when the job cannot say.
func CPUTime(job windows.Handle) (time.Duration, bool) {
	var acct jobAccounting
	if windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil) != nil {
		return 0, false
	}
	return time.Duration(acct.TotalUserTime+acct.TotalKernelTime) * 100, true
}

// PeakMemory returns the peak committed memory of the whole job and of
// its largest process, in KiB (commit, not resident memory); false when
// the job cannot say.
func PeakMemory(job windows.Handle) (jobKB, processKB int64, ok bool) {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if windows.QueryInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil) != nil {
		return 0, 0, false
	}
	return int64(info.PeakJobMemoryUsed / 1024), int64(info.PeakProcessMemoryUsed / 1024), true
}
