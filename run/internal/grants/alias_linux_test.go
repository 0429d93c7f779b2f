package grants

import "testing"

func TestFSPathOf(t *testing.T) {
	a := DenyAliases{mounts: []mountEntry{
		{dev: "8:1", root: "/", point: "/"},
		{dev: "8:2", root: "/", point: "/home"},
		{dev: "8:1", root: "/srv/home", point: "/mnt/home"}, // a bind mount
		{dev: "0:40", root: "/@home", point: "/data"},       // a btrfs subvolume
		{dev: "0:50", root: "/", point: "/mnt/home/x"},      // mounted on top of the bind
	}}
	for _, tc := range []struct {
		p    string
		want fsPath
	}{
		{"/etc/passwd", fsPath{"8:1", "/etc/passwd"}},
		{"/home", fsPath{"8:2", "/"}},
		{"/home/ann/.ssh", fsPath{"8:2", "/ann/.ssh"}},
		{"/mnt/home/ann", fsPath{"8:1", "/srv/home/ann"}},
		{"/mnt/home/x/y", fsPath{"0:50", "/y"}},
		{"/data/ann", fsPath{"0:40", "/@home/ann"}},
		{"/datax", fsPath{"8:1", "/datax"}},
	} {
		if got, ok := a.fsPathOf(tc.p); !ok || got != tc.want {
			t.Errorf("fsPathOf(%s) = %v, %v; want %v", tc.p, got, ok, tc.want)
		}
	}
}
