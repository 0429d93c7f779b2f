// Package workdir makes and removes a run's work folder on the host.
//
// For most uses, Make creates a fresh folder in HostTemp for a run's
// identity, and RemoveAll removes it after the run, whatever the script
// left in it. NewName names one without making it, for a run whose init
// process makes it inside its own root; Owned tells whether a folder at
// a path is a run identity's own.
//
// It runs in the supervisor, with the caller's privileges, while a run
// is planned and after it is gone.
package workdir
