// Package grants holds the file-system work of run's grant planning that
// needs nothing of run itself: the checks of a grant against the trees
// never granted and the deny list (by path, CheckGrantable, and through
// another mount of a file system, DenyAliases), the walk that refuses a
// planted symlink on a root caller's grant (ResolveUnplanted), the making
// of missing write folders by descriptors (Mkdirs), the search of write
// grants for the files the caller's tools run on their own (FindAutorun)
// and, after a root caller's run, the handing of the script's symlinks to
// the sandbox identity (UnplantSymlinks). For a sandbox that runs as
// another identity than the caller, HandOver gives the init process
// detached copies of the skill folder and the grants, id-mapped where
// they can be, and CheckReach and UnreachableError say what that
// identity cannot use otherwise.
//
// Its refusals wrap stageconfig.ErrBadConfig, which is run.ErrBadConfig,
// so run returns them as they are: the text and errors.Is are those the
// user saw when the code lived in run. The two that are not ErrBadConfig
// come as a NoMountNSError and as Plan.MountOnly, which run turns into
// ErrUnsupported and ErrIsolation. What depends on the sandbox identity
// and the kernel (which owners count as a script's, whether a folder can
// be handed over id-mapped) run passes in as func values in the Request.
//
// It runs in the supervisor, while a run is planned (UnplantSymlinks
// after every process of the run is gone). Only the path checks work
// everywhere; the mount table checks and the descriptor walks are Linux
// (Mkdirs and ResolveUnplanted also macOS) and find nothing elsewhere.
package grants
