//go:build linux

package main

import (
	"strings"
)

func setupP09(e *env) error {
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{key, hostFile(e, "/tmp", "p09")}
	return nil
}

func setupP10(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{e.tcp.port(), key, hostFile(e, "/tmp", "p10")}
	return nil
}

// setupHarm prepares probes 16-18: a key to read, a host file to write and
// a listener to reach.
func setupHarm(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	key, err := plantKey(e)
	if err != nil {
		return err
	}
	e.inv.args = []string{key, hostFile(e, "/tmp", "harm"), e.tcp.port()}
	return nil
}

// judgeHarm is shared by the probes whose first step (running a program,
// importing os, exec'ing code) is allowed and whose harm must be stopped.
func judgeHarm(e *env, o *outcome) judgement {
	var harm []string
	if l := leaked(e, o); len(l) > 0 {
		harm = append(harm, "key read")
	}
	if f := existingHostFiles(e); len(f) > 0 {
		harm = append(harm, "host file written")
	}
	if e.tcp != nil && e.tcp.count.Load() > 0 {
		harm = append(harm, "host listener reached")
	}
	// What the allowed first step did, as evidence.
	first := ""
	for _, l := range strings.Split(o.stdout, "\n") {
		if strings.HasPrefix(l, "uid=") {
			first = "id: " + truncate(l, 40)
			break
		}
	}
	if first == "" && len(o.steps) > 0 {
		first = o.steps[0].Label + ": " + o.steps[0].Status
		if strings.HasPrefix(o.steps[0].Detail, "exit ") {
			var ran []string
			for _, s := range o.steps {
				ran = append(ran, strings.Fields(s.Label)[0])
			}
			first = "ran " + strings.Join(ran, ", ")
		}
	}
	if len(harm) > 0 {
		return judgement{verdict: vEffect, evidence: strings.Join(harm, ", ") + "; " + first}
	}
	var ev, lay []string
	for _, s := range o.steps {
		if s.Status == "ok" {
			continue
		}
		if strings.Contains(s.Label, "connect") {
			lay = append(lay, netLayer(s.Status))
		} else {
			lay = append(lay, fsLayer(s.Status))
		}
		ev = append(ev, s.Label+": "+s.Status)
	}
	// Programs run by a shell or subprocess report their failures as text.
	var texts []string
	for _, s := range o.steps {
		if s.Status == "ok" {
			texts = append(texts, strings.Split(s.Detail, "\n")...)
		}
	}
	texts = append(texts, strings.Split(o.stderr, "\n")...)
	for _, t := range texts {
		why := ""
		switch {
		case strings.Contains(t, "connect: Permission denied"), strings.Contains(t, "Couldn't connect"):
			why, t = "landlock-net", "connect: "+afterLast(t, ": ")
		case strings.Contains(t, "Permission denied"):
			why = "landlock-fs"
		case strings.Contains(t, "Read-only file system"):
			why = "mountns"
		case strings.Contains(t, "Network is unreachable"), strings.Contains(t, "Connection refused"):
			why = "netns"
		default:
			continue
		}
		lay = append(lay, why)
		if short := programError(t); short != "" && len(ev) < 4 {
			ev = append(ev, short)
		}
	}
	if len(ev) > 0 {
		first += "; " + strings.Join(dedupe(ev), "; ")
	}
	return judgement{verdict: vNone, evidence: "no harm: " + first, layer: layers(lay...)}
}
