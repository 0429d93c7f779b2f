//go:build linux && (amd64 || arm64)

package initplan

import (
	"maps"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// EtcMask is an entry of the host's /etc the sandbox shows masked: a
// folder by an empty folder, a file by an empty file.
type EtcMask struct {
	Path   string // /etc/...
	Folder bool
}

// EtcFile is a file of the sandbox's own, shown over the host's file at
// Path.
type EtcFile struct {
	Path string // /etc/...
	Data string
}

// SandboxEtc returns what the native backend's init process mounts over
// the host's /etc for cfg's run (see buildEtc): the masks of etc_rule.go
// for a reader of uid and gid (rootCaller: the run's identity is uid and
// gid without groups; else it is the caller's own, whose access the
// kernel checks), and the sandbox's own files, for another backend that
// shows /etc the same way.
func SandboxEtc(cfg *stageconfig.Config, rootCaller bool, uid, gid int) ([]EtcMask, []EtcFile) {
	who := etcReader{rootCaller: rootCaller, uid: uid, gid: gid}
	var masks []EtcMask
	for _, m := range etcMasks("/etc", listDir("/etc"), cfg.AllowNetwork, who, runPaths(cfg)) {
		masks = append(masks, EtcMask{Path: m.path, Folder: m.folder})
	}
	own := etcOwn(cfg.AllowNetwork)
	var files []EtcFile
	for _, path := range slices.Sorted(maps.Keys(own)) {
		if e, ok := lookHostEntry(path); ok && !e.folder && e.link == "" {
			files = append(files, EtcFile{Path: path, Data: own[path]})
		}
	}
	return masks, files
}
