package run

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The deny list (DefaultDenyPaths) as planGrants applies it: expanded for
// every home folder, and checked against each grant.

// checkGrantable refuses a grant of, or inside, a deny entry or a tree
// that is never granted.
func checkGrantable(p, flag string, deny []string, allowed map[string]bool) error {
	for _, n := range neverGranted() {
		if pathUnder(p, n) || p == n {
			return fmt.Errorf("%w: %s %s: %s is never granted (kernel interfaces, devices and sockets)", ErrBadConfig, flag, p, n)
		}
	}
	if allowed[p] {
		return nil
	}
	if d, _ := denyEntryOf(p, deny); d != "" {
		return fmt.Errorf("%w: %s %s: %s is on the deny list (credentials, keys, history); only a policy naming the path exactly can grant it", ErrBadConfig, flag, p, d)
	}
	return nil
}

// denyEntryOf returns the first entry of deny that p is or lies inside,
// and the folder (p or above it) that matches it; "" when none does.
func denyEntryOf(p string, deny []string) (entry, at string) {
	for _, d := range deny {
		for q := p; ; q = filepath.Dir(q) {
			if ok, _ := filepath.Match(d, q); ok || q == d {
				return d, q
			}
			if q == "/" {
				break
			}
		}
	}
	return "", ""
}

// DenyListEntry returns the entry of the built-in deny list
// (DefaultDenyPaths, "~/" entries in every home folder, an entry that is a
// symlink at its target too) that the absolute, clean path p is or lies
// inside, or "" when there is none. As in Run, a path of allowDenied
// exempts itself and what lies below it: p is not denied when p, or a
// folder between p and the entry, is one of them. p is compared as
// written; symbolic links in it are not resolved. A policy uses it to
// refuse a request that Run would hide from the script.
func DenyListEntry(p string, allowDenied []string) string {
	allowed := map[string]bool{}
	for _, a := range allowDenied {
		allowed[filepath.Clean(a)] = true
	}
	d, at := denyEntryOf(p, denyEntries(DefaultDenyPaths(), homeFolders(), allowed))
	if d == "" {
		return ""
	}
	for q := p; ; q = filepath.Dir(q) {
		if allowed[q] {
			return ""
		}
		if q == at || q == "/" {
			return d
		}
	}
}

// denyEntries expands the deny list: "~/" entries for every home folder,
// and existing entries also by their resolved path (a symlinked ~/.ssh
// keeps its keys elsewhere). Entries named in allowed are dropped.
func denyEntries(list, homes []string, allowed map[string]bool) []string {
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if !allowed[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, e := range list {
		var paths []string
		if rest, ok := strings.CutPrefix(e, "~/"); ok {
			for _, h := range homes {
				paths = append(paths, filepath.Join(h, rest))
			}
		} else if filepath.IsAbs(e) {
			paths = []string{e}
		}
		for _, p := range paths {
			add(p)
			if hasMeta(p) {
				continue
			}
			if r, err := filepath.EvalSymlinks(p); err == nil && r != "/" {
				add(r)
			}
		}
	}
	return out
}

// homeFolders returns the caller's $HOME, /root and every home folder
// named in /etc/passwd that exists, resolved, without "/".
func homeFolders() []string {
	cands := []string{os.Getenv("HOME"), "/root"}
	if f, err := os.Open("/etc/passwd"); err == nil {
		sc := bufio.NewScanner(f)
		for n := 0; sc.Scan() && n < 10000; n++ {
			if fields := strings.Split(sc.Text(), ":"); len(fields) >= 7 {
				cands = append(cands, fields[5])
			}
		}
		f.Close()
	}
	var out []string
	for _, h := range cands {
		if !filepath.IsAbs(h) {
			continue
		}
		r, err := filepath.EvalSymlinks(h)
		if err != nil || r == "/" {
			continue
		}
		if st, err := os.Stat(r); err == nil && st.IsDir() && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// denyBase is the folder part of a deny entry without wildcards.
func denyBase(d string) string {
	for hasMeta(d) {
		d = filepath.Dir(d)
	}
	return d
}

func hasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }
