//go:build linux && (amd64 || arm64)

package native

import (
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestCompileAheadGuess: the program compiled ahead is taken only for the
// input it was compiled from; any difference (a namespace or the cgroup
// missing after all) leaves sendStage to compile again.
func TestCompileAheadGuess(t *testing.T) {
	cfg := stageconfig.Config{Namespaces: []stageconfig.Layer{stageconfig.LayerUserNS, stageconfig.LayerMountNS}, MemoryCgroup: true, Env: []string{"PATH=/usr/bin"}}
	enc, err := stageconfig.Encode(nil, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	want := &initplan.Plan{}
	a := &pendingCompile{in: initplan.Input{Config: &cfg, HostUID: 1000, Name: "ss-x"}, enc: enc, done: done, plan: want}
	a.claimed.Store(true) // compiled by its goroutine
	same := cfg
	same.Grants = []stageconfig.GrantMount{} // empty is none, as nil
	if got, err := a.result(initplan.Input{Config: &same, HostUID: 1000, Name: "ss-x"}); got != want || err != nil {
		t.Fatalf("same input: %v, %v", got, err)
	}
	for _, mod := range []func(*initplan.Input){
		// A value inside a slice of the config, changed after the guess.
		func(in *initplan.Input) { in.Config.Env = []string{"PATH=/tmp"} },
		func(in *initplan.Input) { in.Config.Namespaces = []stageconfig.Layer{stageconfig.LayerUserNS} },
		func(in *initplan.Input) { in.Config.MemoryCgroup = false },
		func(in *initplan.Input) { in.Config.Limits.AddressSpace = 1 << 30 },
		func(in *initplan.Input) { in.KnownMissing = true },
		func(in *initplan.Input) { in.HostUID = 0 },
	} {
		other := cfg
		in := initplan.Input{Config: &other, HostUID: 1000, Name: "ss-x"}
		mod(&in)
		if got, err := a.result(in); got != nil || err != nil {
			t.Fatalf("changed input %+v: took the program compiled ahead", in)
		}
	}
	var none *pendingCompile
	if got, err := none.result(initplan.Input{}); got != nil || err != nil {
		t.Fatal("no compile ahead gave a program")
	}
}

// TestCompileAheadClaim: a compile whose goroutine has not started by the
// time the program is needed is done by the caller of result, once; the
// goroutine, when it comes, leaves it alone.
func TestCompileAheadClaim(t *testing.T) {
	cfg := stageconfig.Config{Argv: []string{"/bin/true"}, Dir: "/", Env: []string{"PATH=/usr/bin"}}
	enc, err := stageconfig.Encode(nil, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	in := initplan.Input{Config: &cfg, Name: "ss-x"}
	a := &pendingCompile{in: in, enc: enc, done: make(chan struct{})}
	got, err := a.result(in)
	if got == nil || err != nil {
		t.Fatalf("result compiled nothing: %v, %v", got, err)
	}
	if !a.claimed.Load() {
		t.Fatal("the compile was not claimed")
	}
	a.compile() // the goroutine, late: must not compile again or close done twice
	if a.plan != got {
		t.Fatal("the late goroutine replaced the program")
	}
}
