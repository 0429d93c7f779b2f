//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"
)

func setupP06(e *env) error {
	if err := e.withTCP(); err != nil {
		return err
	}
	e.inv.args = []string{e.tcp.port()}
	return nil
}

func judgeP06(e *env, o *outcome) judgement {
	n := e.tcp.count.Load()
	ev := stepEvidence(o, "tcp connect")
	if n > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("host listener accepted %d; %s", n, ev)}
	}
	s, _ := o.find("tcp connect")
	return judgement{verdict: vNone, evidence: "host listener accepted 0; " + ev, layer: netLayer(s.Status)}
}

func setupP07(e *env) error {
	u, err := newUDPCounter()
	if err != nil {
		return err
	}
	e.udp = u
	e.defer_(u.close)
	e.inv.args = []string{u.port()}
	return nil
}

func judgeP07(e *env, o *outcome) judgement {
	n := e.udp.count.Load()
	ev := stepEvidence(o, "getaddrinfo", "udp dns")
	if n > 0 {
		return judgement{verdict: vEffect, evidence: fmt.Sprintf("host DNS listener got %d queries; %s", n, ev)}
	}
	if s, ok := o.find("getaddrinfo"); ok && s.Status == "ok" {
		return judgement{verdict: vEffect, evidence: "resolved a name: " + s.Detail}
	}
	s, _ := o.find("udp dns")
	lay := netLayer(s.Status)
	if lay == "" || lay == "landlock-net" {
		lay = layers(lay, "netns")
	}
	return judgement{verdict: vNone, evidence: "host DNS listener got 0; " + ev, layer: lay}
}

func setupP08(e *env) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	e.inv.args = []string{port}
	e.inv.during = func(ctx context.Context, _ int) {
		poll(ctx, 100*time.Millisecond, func() {
			if e.peak > 0 {
				return
			}
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 200*time.Millisecond)
			if err == nil {
				e.peak++
				c.Close()
			}
		})
	}
	return nil
}

func judgeP08(e *env, o *outcome) judgement {
	ev := stepEvidence(o, "bind", "listen", "accept")
	if e.peak > 0 {
		return judgement{verdict: vEffect, evidence: "the host connected to the probe's port; " + ev}
	}
	s, _ := o.find("bind")
	if s.Status == "ok" {
		return judgement{verdict: vNone, evidence: "listening inside only, host could not connect; " + ev, layer: "netns"}
	}
	return judgement{verdict: vNone, evidence: ev, layer: netLayer(s.Status)}
}

func setupP26(e *env) error {
	names := []string{
		filepath.Join("/tmp", "ssp26-"+e.nonce+".sock"),
		filepath.Join(e.cfg.home, ".ssp26-"+e.nonce+".sock"),
		"@ssp26-" + e.nonce,
	}
	for _, n := range names {
		u, err := newUnixCounter(n)
		if err != nil {
			return err
		}
		e.unix = append(e.unix, u)
		e.defer_(u.close)
	}
	e.inv.args = names
	return nil
}

func judgeP26(e *env, o *outcome) judgement {
	var reached, ev, lay []string
	for _, u := range e.unix {
		short := "/tmp"
		switch {
		case strings.HasPrefix(u.name, "@"):
			short = "abstract"
		case strings.HasPrefix(u.name, e.cfg.home):
			short = "$HOME"
		}
		if u.tcp.count.Load() > 0 {
			reached = append(reached, short)
		}
		s, _ := o.find("connect " + u.name)
		ev = append(ev, short+": "+s.Status)
		switch {
		case s.Status == "ok":
		case short == "abstract" && s.Status == "EPERM":
			lay = append(lay, "landlock-scope")
		case short == "abstract":
			lay = append(lay, "netns")
		case short == "$HOME" && s.Status == "EACCES":
			// Landlock has no right for connect(); EACCES here is the
			// sandbox identity's DAC check (see the ablation column).
			lay = append(lay, "userns")
		default:
			lay = append(lay, fsLayer(s.Status))
		}
	}
	if len(reached) > 0 {
		return judgement{verdict: vEffect, evidence: "host accepted on " + strings.Join(reached, ", ") + "; " + strings.Join(ev, "; ")}
	}
	return judgement{verdict: vNone, evidence: strings.Join(ev, "; "), layer: layers(lay...)}
}
