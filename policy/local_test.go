package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestLocalServices: [network] allow_local (ports as strings) and
// allow_unix (paths, a relative one against the policy's folder) join
// the flags' (once each), reach run.Sandbox and the encoded policy; a
// skill's request file may ask for them, and is refused what the flags
// and the operator policy do not grant, with the flag that would.
func TestLocalServices(t *testing.T) {
	op := mustParse(t, "[network]\nallow_local = [\"5432\", \"8080\"]\nallow_unix = [\"run/app.sock\"]\n", "/ops")
	if !reflect.DeepEqual(op.Network.AllowLocal, []int{5432, 8080}) || !reflect.DeepEqual(op.Network.AllowUnix, []string{"/ops/run/app.sock"}) {
		t.Fatalf("parsed %+v", op.Network)
	}
	r, err := Resolve(Flags{AllowLocal: []int{8080, 3000}, AllowUnix: []string{"/srv/db.sock"}}, op, nil, "/skill")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{8080, 3000, 5432}; !reflect.DeepEqual(r.Network.AllowLocal, want) {
		t.Errorf("resolved ports %v, want %v", r.Network.AllowLocal, want)
	}
	if want := []string{"/srv/db.sock", "/ops/run/app.sock"}; !reflect.DeepEqual(r.Network.AllowUnix, want) {
		t.Errorf("resolved sockets %q, want %q", r.Network.AllowUnix, want)
	}
	if b, _ := r.Encode(); !strings.Contains(string(b), `"allow_local":[8080,3000,5432],"allow_unix":["/srv/db.sock","/ops/run/app.sock"]`) {
		t.Errorf("encoded policy %s", b)
	}
	var sb run.Sandbox
	r.Apply(&sb, nil)
	if !reflect.DeepEqual(sb.AllowLocal, r.Network.AllowLocal) || !reflect.DeepEqual(sb.AllowUnix, r.Network.AllowUnix) {
		t.Errorf("applied %v %q", sb.AllowLocal, sb.AllowUnix)
	}

	req, err := Parse(RequestFile, []byte("[network]\nallow_local = [\"5432\", \"6379\"]\nallow_unix = [\"/srv/db.sock\", \"/srv/other.sock\"]\n"), "/skill", "/home/u")
	if err != nil {
		t.Fatal(err)
	}
	var re *RefusedError
	_, err = Resolve(Flags{AllowUnix: []string{"/srv/db.sock"}}, op, req, "/skill")
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "--allow-local 6379") || !strings.Contains(err.Error(), "--allow-unix /srv/other.sock") ||
		strings.Contains(err.Error(), "5432") || strings.Contains(err.Error(), "db.sock") {
		t.Errorf("request beyond the grants: %v", err)
	}
	for _, bad := range []string{
		"[network]\nallow_local = [\"0\"]\n",
		"[network]\nallow_local = [\"65536\"]\n",
		"[network]\nallow_local = [\"+80\"]\n",
		"[network]\nallow_local = [\"080\"]\n",
		"[network]\nallow_local = \"80\"\n",
		"[network]\nallow_unix = [\"\"]\n",
	} {
		if _, err := Parse("p.toml", []byte(bad), "/ops", "/home/u"); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
