// Package denylist expands the deny list (credentials, keys, history:
// run.DefaultDenyPaths plus a caller's entries) for every home folder,
// indexes it, and answers which entry a path is or lies inside and which
// entries lie inside a folder.
//
// It runs in the supervisor, where Run checks and masks its grants with
// it, and in the policy reader and the MCP server, which refuse a request
// that Run would hide from the script (Entry). It reads the file system
// (home folders, /etc/passwd, lstat(2) of the entries) and holds no state
// beyond a List.
package denylist

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// List is the expanded deny list (Expand) indexed for one plan:
// checking a grant against it then costs the same whatever the length of
// the list or the number of other grants (a linear scan of the ~1,000
// entries for each folder above each grant was most of a run's cost).
type List struct {
	entries []string       // in the order of the list
	index   map[string]int // an entry without wildcards -> its place
	wild    []int          // the places of the entries with wildcards
	sorted  []string       // the entries without wildcards, sorted
	// exists records the entries without wildcards that existed when the
	// list was expanded (lstat(2)).
	exists map[string]bool
	// globbed holds each wildcard entry's matches, expanded once.
	globbed map[int][]string
}

// EntryOf returns the first entry of the list that p is or lies inside,
// and the folder (p or above it, the deepest) that matches it; "" when
// none does.
func (dl *List) EntryOf(p string) (entry, at string) {
	best := len(dl.entries)
	for q := p; ; q = filepath.Dir(q) {
		if i, ok := dl.index[q]; ok && i < best {
			best, at = i, q
		}
		for _, i := range dl.wild {
			if i >= best {
				break
			}
			if ok, _ := filepath.Match(dl.entries[i], q); ok {
				best, at = i, q
			}
		}
		if q == "/" || q == "." {
			break
		}
	}
	if best == len(dl.entries) {
		return "", ""
	}
	return dl.entries[best], at
}

// MatchesUnder returns the entries (wildcards expanded to what exists)
// strictly inside folder g that allowed does not exempt, in the order of
// the list.
func (dl *List) MatchesUnder(g string, allowed map[string]bool) []string {
	prefix := strings.TrimSuffix(g, "/") + "/"
	var places []int
	for i := sort.SearchStrings(dl.sorted, prefix); i < len(dl.sorted) && strings.HasPrefix(dl.sorted[i], prefix); i++ {
		places = append(places, dl.index[dl.sorted[i]])
	}
	for _, i := range dl.wild {
		// A wildcard's matches have as many names as it has: none lies
		// below a grant as deep (/tmp/ssh-* under /tmp/work/data), and
		// /tmp need not be read for each such grant.
		if g == "/" || strings.Count(g, "/") < strings.Count(dl.entries[i], "/") {
			places = append(places, i)
		}
	}
	slices.Sort(places)
	var out []string
	for _, i := range places {
		matches := []string{dl.entries[i]}
		if HasMeta(dl.entries[i]) {
			if dl.globbed == nil {
				dl.globbed = map[int][]string{}
			}
			if _, ok := dl.globbed[i]; !ok {
				dl.globbed[i], _ = filepath.Glob(dl.entries[i])
			}
			matches = dl.globbed[i]
		}
		for _, m := range matches {
			if m != g && under(m, g) && !allowed[m] {
				out = append(out, m)
			}
		}
	}
	return out
}

// Entries returns the expanded entries, in the order of the list.
func (dl *List) Entries() []string { return dl.entries }

// Exists reports whether the entry d, without wildcards, existed when the
// list was expanded.
func (dl *List) Exists(d string) bool { return dl.exists[d] }

// Has reports whether d is an entry of the list as written.
func (dl *List) Has(d string) bool {
	if _, ok := dl.index[d]; ok {
		return true
	}
	return slices.ContainsFunc(dl.wild, func(i int) bool { return dl.entries[i] == d })
}

// Entry returns the entry of the deny list as written (list, the
// built-in one is run.DefaultDenyPaths; "~/" entries in every home folder,
// an entry that is a symlink at its target too) that the absolute, clean
// path p is or lies inside, or "" when there is none. As in Run, a path of allowDenied
// exempts itself and what lies below it: p is not denied when p, or a
// folder between p and the entry, is one of them. p is compared as
// written; symbolic links in it are not resolved. A policy uses it to
// refuse a request that Run would hide from the script.
func Entry(p string, list, allowDenied []string) string {
	allowed := map[string]bool{}
	for _, a := range allowDenied {
		allowed[filepath.Clean(a)] = true
	}
	d, at := New(list, HomeFolders(), allowed).EntryOf(p)
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

// Expand expands the deny list: "~/" entries for every home folder,
// and existing entries also by their resolved path (a symlinked ~/.ssh
// keeps its keys elsewhere). Entries named in allowed are dropped.
func Expand(list, homes []string, allowed map[string]bool) []string {
	return New(list, homes, allowed).entries
}

// New expands the deny list as Expand says and indexes it.
// Most entries do not exist (a hundred names in each of a dozen home
// folders): one lstat(2) tells, and none at all when the folder above is
// known to be missing, before the entry is resolved.
func New(list, homes []string, allowed map[string]bool) *List {
	dl := &List{index: map[string]int{}, exists: map[string]bool{}}
	add := func(p string) {
		p = filepath.Clean(p)
		if allowed[p] {
			return
		}
		if HasMeta(p) {
			if !slices.Contains(dl.entries, p) {
				dl.wild = append(dl.wild, len(dl.entries))
				dl.entries = append(dl.entries, p)
			}
			return
		}
		if _, ok := dl.index[p]; !ok {
			dl.index[p] = len(dl.entries)
			dl.entries = append(dl.entries, p)
			dl.sorted = append(dl.sorted, p)
		}
	}
	present := map[string]bool{} // paths looked at: do they exist?
	listed := map[string]bool{}  // folders whose every name is in present
	for _, h := range homes {
		listNames(h, present, listed)
	}
	var exists func(p string) bool
	exists = func(p string) bool {
		if ok, seen := present[p]; seen {
			return ok
		}
		up := filepath.Dir(p)
		ok := !listed[up] && (p == "/" || exists(up))
		if ok {
			_, err := os.Lstat(p)
			ok = err == nil
		}
		present[p] = ok
		return ok
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
			p = filepath.Clean(p)
			add(p)
			if HasMeta(p) || !exists(p) {
				continue
			}
			dl.exists[p] = true
			if r, err := filepath.EvalSymlinks(p); err == nil && r != "/" {
				add(r)
				dl.exists[r] = true
			}
		}
	}
	sort.Strings(dl.sorted)
	return dl
}

// listNames marks every name in the folder dir as present, and dir as
// listed, when it holds at most 256 names: one read of a home folder then
// answers for the hundred deny entries in it, where most do not exist. A
// larger folder (a home of /usr/sbin) is left to one lstat(2) an entry.
func listNames(dir string, present, listed map[string]bool) {
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	defer f.Close()
	names, err := f.Readdirnames(257)
	if err != nil && !errors.Is(err, io.EOF) || len(names) > 256 {
		return
	}
	if more, _ := f.Readdirnames(1); len(more) > 0 {
		return
	}
	for _, n := range names {
		present[filepath.Join(dir, n)] = true
	}
	listed[dir] = true
}

// HomeFolders returns the caller's $HOME, /root and every home folder
// named in /etc/passwd that exists, resolved, without "/".
func HomeFolders() []string {
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

// Base is the folder part of a deny entry without wildcards.
func Base(d string) string {
	for HasMeta(d) {
		d = filepath.Dir(d)
	}
	return d
}

// HasMeta reports whether p holds filepath.Match wildcards (or an
// escape).
func HasMeta(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// under reports whether p lies strictly inside dir.
func under(p, dir string) bool {
	return p != dir && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
