//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func judgeP01(e *env, o *outcome) judgement {
	var ev []string
	var lay []string
	effect := false
	for _, f := range []string{"/etc/passwd", "/etc/shadow"} {
		s, ok := o.find("read " + f)
		if !ok {
			ev = append(ev, f+": no result")
			continue
		}
		if s.Status != "ok" {
			ev = append(ev, f+": "+s.Status)
			lay = append(lay, fsLayer(s.Status))
			continue
		}
		hostSum, readable := sha256File(f)
		got := strings.TrimPrefix(s.Detail, "sha256=")
		switch {
		case !readable || got == hostSum:
			effect = true
			ev = append(ev, f+": read (host content)")
		default:
			ev = append(ev, f+": read a different file (masked)")
			lay = append(lay, "mountns")
		}
	}
	if effect {
		return judgement{verdict: vEffect, evidence: strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

func setupKeyArg(e *env) error {
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{key}
	return nil
}

// judgeSecretRead: effect when a planted secret shows up in the output.
func judgeSecretRead(stepPrefix string) func(e *env, o *outcome) judgement {
	return func(e *env, o *outcome) judgement {
		s, _ := o.find(stepPrefix)
		ev := s.Label + ": " + s.Status
		if s.Label == "" {
			ev = "no read step"
		}
		if l := leaked(e, o); len(l) > 0 {
			return judgement{verdict: vEffect, evidence: "secret in output; " + ev}
		}
		return judgement{verdict: vNone, evidence: ev, layer: fsLayer(s.Status)}
	}
}

func setupP03(e *env) error {
	home := e.cfg.home
	e.inv.args = []string{
		hostFile(e, "/tmp", "p03"),
		hostFile(e, "/var/tmp", "p03"),
		hostFile(e, "/dev/shm", "p03"),
		hostFile(e, home, "p03"),
		hostFile(e, filepath.Join(e.skillDir, "scripts"), "p03"),
	}
	return nil
}

func judgeP03(e *env, o *outcome) judgement {
	if got := existingHostFiles(e); len(got) > 0 {
		return judgement{verdict: vEffect, evidence: "on the host: " + strings.Join(got, ", ")}
	}
	var ev, lay []string
	for _, s := range o.steps {
		dir := filepath.Dir(strings.TrimPrefix(s.Label, "write "))
		if dir == filepath.Join(e.skillDir, "scripts") {
			dir = "skill/scripts"
		} else if dir == e.cfg.home {
			dir = "$HOME"
		}
		if s.Status == "ok" {
			ev = append(ev, dir+": wrote inside only")
			lay = append(lay, "mountns")
		} else {
			ev = append(ev, dir+": "+s.Status)
			lay = append(lay, fsLayer(s.Status))
		}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}

func setupP04(e *env) error {
	// A copy of the skill in a fresh folder, with the secret planted next
	// to it: the caller may not be allowed to write into testdata/.
	dir, err := tempSkillDir(e, "security-p04-")
	if err != nil {
		return err
	}
	skill := filepath.Join(dir, filepath.Base(e.skillDir))
	if err := copyTree(e.skillDir, skill); err != nil {
		return err
	}
	e.inv.skillDir = skill
	name := ".p04-secret-" + e.nonce
	secret := "TRAVERSALSECRET-" + newNonce()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(secret+"\n"), 0o644); err != nil {
		return err
	}
	e.secrets = append(e.secrets, secret)
	e.inv.args = []string{"../../" + name, "../../../../../../../../../../etc/hostname"}
	return nil
}

func judgeP05(e *env, o *outcome) judgement {
	s, ok := o.find("listdir /")
	if !ok {
		return judgement{verdict: vNone, evidence: "no result"}
	}
	if s.Status != "ok" {
		return judgement{verdict: vNone, evidence: "listdir /: " + s.Status, layer: fsLayer(s.Status)}
	}
	var names []string
	json.Unmarshal([]byte(s.Detail), &names)
	ents, _ := os.ReadDir("/")
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	missing := 0
	for _, d := range ents {
		if !seen[d.Name()] {
			missing++
		}
	}
	if missing == 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("listed the host's / (%d entries)", len(names))}
	}
	return judgement{verdict: vNone, layer: "mountns",
		evidence: fmt.Sprintf("sees its own root (%d entries, %d host entries hidden)", len(names), missing)}
}

func judgeP24(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "sparse", "truncate", "dense 320")
	dense, multi, made := 0, 0, 0
	if s, ok := o.find("dense written"); ok {
		dense, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		ev += " at " + s.Detail
	}
	if s, ok := o.find("many written"); ok {
		multi, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		ev += "; 8 files x 128 MiB: " + s.Detail
	} else if s, ok := lastStep(o, "many progress"); ok {
		ev += "; 8 files x 128 MiB: killed after " + s.Detail
	}
	if s, ok := o.find("empty files made"); ok {
		made, _ = strconv.Atoi(strings.Fields(s.Detail + " 0")[0])
		status := "made"
		if e, ok := o.find("empty files 20000"); ok && e.Status != "ok" {
			status = e.Status + " after"
		}
		ev += fmt.Sprintf("; 20000 empty files: %s %d", status, made)
	}
	if fs, ok := o.find("work folder fs"); ok {
		ev += "; work folder fs " + fs.Detail
	}
	// A sparse 10 GiB file takes no space; the effect is bytes on disk:
	// one file past the 256 MiB default cap, or 1 GiB over several files,
	// or every inode the default cap allows and more.
	switch {
	case dense >= 320:
		return judgement{verdict: vEffect, evidence: "one file past the cap; " + ev}
	case multi >= 1024:
		return judgement{verdict: vEffect, evidence: "total not capped; " + ev}
	case made >= 20000:
		return judgement{verdict: vEffect, evidence: "inodes not capped; " + ev}
	}
	var lay []string
	for _, st := range o.steps {
		switch st.Status {
		case "EFBIG":
			lay = append(lay, "rlimits")
		case "ENOSPC", "EDQUOT":
			lay = append(lay, "work folder size cap")
		}
	}
	if o.sandboxed && o.record["outcome"] == "resource_limit" {
		// The supervisor's watch killed the run: the work folder was on
		// the host disk (no mount namespace).
		ev += fmt.Sprintf("; killed by the watch (outcome resource_limit, limit_exceeded %v)", o.record["limit_exceeded"])
		lay = append(lay, "watch")
	}
	return judgement{verdict: vNone, evidence: ev, layer: layers(lay...)}
}

func setupP25(e *env) error {
	dir, err := tempSkillDir(e, "security-p25-")
	if err != nil {
		return err
	}
	skill := filepath.Join(dir, "p25-symlink-home")
	if err := copyTree(e.skillDir, skill); err != nil {
		return err
	}
	if err := os.Symlink(e.cfg.home, filepath.Join(skill, "home-link")); err != nil {
		return err
	}
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.skillDir = skill
	e.inv.args = []string{filepath.Base(key)}
	return nil
}

func judgeP25(e *env, o *outcome) judgement {
	if l := leaked(e, o); len(l) > 0 {
		return judgement{verdict: vEffect, evidence: "key read through the skill's symlink"}
	}
	if o.sandboxed && len(o.steps) == 0 && strings.Contains(strings.ToLower(o.stderr), "symlink") {
		line := firstLineWith(o.stderr, "symlink")
		return judgement{verdict: vNone, evidence: "refused: " + truncate(line, 90), layer: "validate"}
	}
	s, _ := o.find("read ")
	return judgement{verdict: vNone, evidence: "read: " + s.Status, layer: fsLayer(s.Status)}
}
