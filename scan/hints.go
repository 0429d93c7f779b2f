package scan

import (
	"strings"
	"sync"
)

// Literal hints, lowercase, that a line must contain before the
// corresponding expressions are tried: one list per rule, in lineHints,
// which finds which lists a line has a hint of in one pass.
const (
	hintIgnore = 1 << iota
	hintHide
	hintSendWhere
	hintSendVerb
	hintDownload
	hintCredential
	hintDecode
)

// lineHints holds the hint lists, indexed by the bit of each (hintIgnore
// is list 0).
var lineHints = &hintIndex{lists: hintLists}

// codeHints indexes only the lists that the rules look at in every file,
// Markdown or not; its masks have the bits of the others clear.
var codeHints = &hintIndex{lists: hintLists, only: hintDownload | hintCredential | hintDecode}

// hintLists are the hint lists of lineHints and codeHints.
var hintLists = [][]string{
	{"ignore", "disregard", "forget", "override", "bypass", " mode"},
	{"the user", "silently", "secretly", "covertly"},
	{"http", "webhook", "ngrok", "requestbin", "pastebin", "."},
	{"send", "upload", "post", "transmit", "exfiltrate", "forward", "copy", "leak"},
	{"curl", "wget", "fetch", "iwr", "irm", "invoke-web", "invoke-rest", "urlopen", "requests.get", "httpx.get", "downloadstring"},
	{".ssh", ".aws", "id_", ".gnupg", ".kube", ".docker", "gcloud", ".netrc", "credentials",
		"chrome", "chromium", "brave", "edge", "firefox", "login data", "logins.json", "key3", "key4", "cookies",
		"keychain", "security", "keyring", "kwallet", "secret-tool", "shadow", ".pgpass",
		".azure", ".password-store", ".pypirc", ".npmrc", ".yarnrc", ".vault-token", ".s3cfg", ".boto", ".my.cnf",
		".oci", ".fly", ".databrickscfg", ".kaggle", ".pki", ".config/", ".cargo", ".gem", ".m2", ".gradle",
		".terraform.d", "huggingface", ".claude", ".codex"},
	{"base64", "xxd", "openssl", "decode", "fromhex", "unhexlify", "atob", "buffer.from", "zlib", "marshal"},
}

// hintIndex finds which of its lists of literal hints a line holds a hint
// of, in one pass over the line: a strings.Contains per hint made about
// a hundred passes over every line, half of a scan's time. It is built
// on first use, as lazyRegexp is, so that no program start pays for it.
type hintIndex struct {
	lists [][]string
	// only, when not 0, holds the bits of the lists indexed; the others
	// are never found.
	only uint
	once sync.Once
	// The hints of three bytes or more are found in two steps. tri is a
	// set (a bitmap of 2^16 bits, hashed) of their first three bytes in
	// lower case: most positions of a line fail it, in a loop with
	// almost no branch taken (looking up every pair of bytes, common in
	// prose, mispredicted a branch at every few bytes). A position that
	// passes is looked up by its first two bytes c0, c1, in either ASCII
	// case: first[c0] is 0 when no hint starts with c0, else 1 + the
	// index of c0's row in rows; the row maps c1 to 1 + the index in
	// byPair of the hints that start with c0 c1 (0: none do). All fit in
	// a level-1 cache, and neither the line nor the hints are folded but
	// for the few candidates compared. single and short are the hints of
	// one and two bytes; fold maps a byte to its ASCII lower case.
	tri    [1 << 10]uint64
	fold   [256]byte
	first  [256]uint8
	rows   [][256]uint8
	byPair []hintGroup
	single []hintRef
	short  []hintRef
}

// triBit returns the index in tri of the three lower-case bytes in the
// low 24 bits of key.
func triBit(key uint32) uint32 { return (key & 0xffffff) * 0x9e3779b1 >> 16 }

// hintGroup is the hints that start with the same two bytes, and the
// union of their lists' bits: once a line has all of them, the group is
// not looked at again.
type hintGroup struct {
	refs []hintRef
	bits uint
}

// hintRef is one hint and the bit of its list.
type hintRef struct {
	hint string
	bit  uint
}

// build fills the tables.
func (h *hintIndex) build() {
	for c := range h.fold {
		h.fold[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			h.fold[c] += 'a' - 'A'
		}
	}
	for i, list := range h.lists {
		if h.only != 0 && h.only&(1<<i) == 0 {
			continue
		}
		for _, x := range list {
			r := hintRef{x, 1 << i}
			switch len(x) {
			case 1:
				h.single = append(h.single, r)
				continue
			case 2:
				h.short = append(h.short, r)
				continue
			}
			b := triBit(uint32(x[0])<<16 | uint32(x[1])<<8 | uint32(x[2]))
			h.tri[b>>6] |= 1 << (b & 63)
			if h.first[x[0]] == 0 {
				h.rows = append(h.rows, [256]uint8{})
				h.first[x[0]] = uint8(len(h.rows)) // fewer than 255 first bytes
				h.first[upper(x[0])] = h.first[x[0]]
			}
			row := &h.rows[h.first[x[0]]-1]
			if row[x[1]] == 0 {
				h.byPair = append(h.byPair, hintGroup{})
				row[x[1]] = uint8(len(h.byPair)) // fewer than 255 pairs
				row[upper(x[1])] = row[x[1]]
			}
			g := &h.byPair[row[x[1]]-1]
			g.refs = append(g.refs, r)
			g.bits |= r.bit
		}
	}
}

// upper returns the ASCII upper case of c (c itself if not a letter).
func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// mask returns the bits of the lists with a hint that s contains, as
// strings.Contains with each hint would find.
func (h *hintIndex) mask(s string) uint { return h.scan(s, false) }

// maskFold is mask of strings.ToLower(s) for an ASCII s, without making
// the copy.
func (h *hintIndex) maskFold(s string) uint { return h.scan(s, true) }

// scan is mask, folding ASCII upper case to lower case when fold is set
// (the hints are lower case). The tables find candidates in either case;
// only a candidate is compared, exactly or folding.
func (h *hintIndex) scan(s string, fold bool) uint {
	h.once.Do(h.build)
	var m uint
	for _, r := range h.single {
		c := r.hint[0]
		if strings.IndexByte(s, c) >= 0 || fold && upper(c) != c && strings.IndexByte(s, upper(c)) >= 0 {
			m |= r.bit
		}
	}
	for _, r := range h.short { // none today: kept correct, not fast
		for i := 0; i+1 < len(s) && m&r.bit == 0; i++ {
			if hasHint(s[i:], r.hint, fold) {
				m |= r.bit
			}
		}
	}
	if len(s) < 3 {
		return m
	}
	key := uint32(h.fold[s[0]])<<8 | uint32(h.fold[s[1]])
	for i := 0; i+2 < len(s); i++ {
		key = key<<8 | uint32(h.fold[s[i+2]])
		if b := triBit(key); h.tri[b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		row := h.first[s[i]]
		if row == 0 {
			continue
		}
		k := h.rows[row-1][s[i+1]]
		if k == 0 {
			continue
		}
		g := &h.byPair[k-1]
		if m&g.bits == g.bits {
			continue
		}
		for _, r := range g.refs {
			if m&r.bit == 0 && hasHint(s[i:], r.hint, fold) {
				m |= r.bit
			}
		}
	}
	return m
}

// hasHint reports whether s starts with the lower-case hint, exactly or,
// when fold is set, folding ASCII upper case in s.
func hasHint(s, hint string, fold bool) bool {
	if len(s) < len(hint) {
		return false
	}
	if !fold {
		return s[:len(hint)] == hint
	}
	for j := 0; j < len(hint); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != hint[j] {
			return false
		}
	}
	return true
}
