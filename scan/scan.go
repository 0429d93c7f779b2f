package scan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/ordered"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// Bounds of a scan. MaxFileBytes is the most of the start of one file that
// is read; a larger file gets a not-scanned finding (high for a script or
// Markdown, whose first MaxFileBytes and last tailBytes are scanned too). After
// MaxSkillBytes of a skill's files were read, the remaining files get
// not-scanned findings too, so a hostile folder cannot make a scan run for
// hours.
const (
	MaxFileBytes  = 1 << 20
	MaxSkillBytes = 64 << 20
)

// Result is the scan of one skill folder.
type Result struct {
	// Path is the skill folder as given.
	Path string `json:"path"`
	// Findings are sorted by file, line and rule.
	Findings []Finding `json:"findings"`
	// Files is the number of regular files looked at.
	Files int `json:"files"`

	read   int64              // bytes read so far, against MaxSkillBytes
	counts map[findingKey]int // findings added per file, rule and severity
}

// maxRepeats bounds the findings of one rule at one severity in one file:
// a hostile file of short lines, each with a zero-width space, would
// otherwise make a finding of every 5 bytes (a 64 MiB skill, gigabytes of
// findings and output). Past it one finding says the rest are not listed;
// the severity is kept, so the exit status does not change.
const maxRepeats = 100

// findingKey is what maxRepeats counts by.
type findingKey struct {
	file, rule string
	sev        Severity
}

// Max returns the highest severity among the findings, and false when
// there are none.
func (r *Result) Max() (Severity, bool) {
	if len(r.Findings) == 0 {
		return Info, false
	}
	m := Info
	for _, f := range r.Findings {
		m = max(m, f.Severity)
	}
	return m, true
}

// Skill scans the skill folder dir. It fails only when the folder cannot
// be listed (missing, unreadable, more than sign.MaxEntries entries);
// problems with single files are findings.
func Skill(dir string) (*Result, error) {
	tree, err := sign.List(dir)
	if errors.Is(err, sign.ErrTooLarge) { // the only error that names no path
		return nil, fmt.Errorf("scan: %s: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	res := &Result{Path: dir, Findings: []Finding{}}
	for _, e := range tree.Entries {
		switch {
		case e.Type == fs.ModeDir:
		case e.Type == fs.ModeSymlink:
			res.link(tree, e.Path)
		case e.Type != 0:
			res.add(Finding{RuleLink, Medium, e.Path, 0, "special file (" + e.Type.String() + "), never opened"})
		default:
			res.Files++
			res.file(tree, e.Path)
		}
	}
	slices.SortStableFunc(res.Findings, func(a, b Finding) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return res, nil
}

// add records the finding f, or drops it past maxRepeats of its kind.
func (r *Result) add(f Finding) {
	if r.counts == nil {
		r.counts = map[findingKey]int{}
	}
	k := findingKey{f.File, f.Rule, f.Severity}
	r.counts[k]++
	switch n := r.counts[k]; {
	case n <= maxRepeats:
		r.Findings = append(r.Findings, f)
	case n == maxRepeats+1:
		f.Reason = fmt.Sprintf("more findings of this rule at this severity in this file, from this line on, are not listed (the first %d are)", maxRepeats)
		r.Findings = append(r.Findings, f)
	}
}

// link reports a symlink, high when it leaves the skill folder.
func (r *Result) link(tree *sign.Tree, rel string) {
	target, err := tree.Readlink(rel)
	if err != nil {
		r.add(Finding{RuleLink, Medium, rel, 0, "symlink that cannot be read"})
		return
	}
	t := filepath.ToSlash(target)
	joined := path.Clean(path.Join(path.Dir(rel), t))
	if path.IsAbs(t) || joined == ".." || strings.HasPrefix(joined, "../") {
		r.add(Finding{RuleLink, High, rel, 0, fmt.Sprintf("symlink to %q, outside the skill", truncate(target, 80))})
		return
	}
	r.add(Finding{RuleLink, Medium, rel, 0, fmt.Sprintf("symlink to %q (a signed skill may not contain links)", truncate(target, 80))})
}

// tailBytes is how much of the end of a file too large to scan is read
// and scanned, besides its first MaxFileBytes: padding after a payload
// or before it does not hide it. Only the middle of such a file goes
// unread, which is why the file itself is a finding (unscannedSeverity).
const tailBytes = 64 << 10

// unscannedSeverity is the severity of a file that was not read through:
// high for what runs or instructs (a script or source file, a file under
// scripts/, a shebang, an execute bit, Markdown, compiled code), since
// passing it would vouch for content nobody read; info for data.
func unscannedSeverity(k fileKind, exec bool) Severity {
	if k.code || exec || k.markdown || k.skillMD || k.binary == "native" {
		return High
	}
	return Info
}

// file scans one regular file, reading at most MaxFileBytes+1 bytes, and
// tailBytes more from the end of a larger script or Markdown file.
func (r *Result) file(tree *sign.Tree, rel string) {
	f, st, err := tree.Open(rel)
	if err != nil {
		r.add(Finding{RuleNotScanned, High, rel, 0, "cannot be read, so not scanned: " + err.Error()})
		return
	}
	defer f.Close()
	exec := st.Mode().Perm()&0o111 != 0
	if r.read >= MaxSkillBytes {
		// Its first bytes only, to tell a script from data.
		head := make([]byte, 512)
		n, _ := io.ReadFull(f, head)
		k := classify(rel, head[:n], exec)
		r.add(Finding{RuleNotScanned, unscannedSeverity(k, exec), rel, 0, fmt.Sprintf("not scanned: the skill's first %d MiB were read already", MaxSkillBytes>>20)})
		return
	}
	// Sized from the file's size (which may change while it is read), so
	// that small files do not pay for the largest one.
	buf := make([]byte, min(max(st.Size(), 0), MaxFileBytes)+1)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		r.add(Finding{RuleNotScanned, High, rel, 0, "cannot be read, so not scanned: " + err.Error()})
		return
	}
	data := buf[:n]
	r.read += int64(n)
	kind := classify(rel, data, exec)
	switch kind.binary {
	case "native":
		r.add(Finding{RuleNativeBinary, High, rel, 0, kind.what + ": compiled code that cannot be reviewed"})
	case "archive":
		r.add(Finding{RuleArchive, Medium, rel, 0, kind.what + " archive: its content is not scanned"})
	}
	if kind.disguised != "" {
		r.add(Finding{RuleDisguised, Medium, rel, 0, "named " + kind.disguised + " but its content is not that format"})
	}
	if exec && !underScripts(rel) && kind.binary != "native" {
		r.add(Finding{RuleExecOutside, Low, rel, 0, "executable file outside scripts/"})
	}
	if kind.binary != "" {
		return
	}
	if int64(n) > st.Size() && n <= MaxFileBytes {
		r.add(Finding{RuleNotScanned, unscannedSeverity(kind, exec), rel, 0, "grew while being read: not scanned"})
		return
	}
	if n > MaxFileBytes || st.Size() > MaxFileBytes {
		sev := unscannedSeverity(kind, exec)
		if sev < High {
			r.add(Finding{RuleNotScanned, sev, rel, 0, fmt.Sprintf("larger than %d bytes (%d): not scanned", MaxFileBytes, st.Size())})
			return
		}
		r.add(Finding{RuleNotScanned, sev, rel, 0, fmt.Sprintf("larger than %d bytes (%d): only its first %d and last %d bytes were scanned", MaxFileBytes, st.Size(), MaxFileBytes, tailBytes)})
		head := wholeLines(data[:MaxFileBytes], false)
		r.text(rel, head, kind)
		r.tail(f, rel, int64(len(head)), st.Size(), kind)
		return
	}
	r.text(rel, data, kind)
}

// tail scans the last tailBytes of a file of size bytes, from headEnd at
// the earliest (the head's whole lines end there). Its line numbers are
// unknown, so its findings have none and say where they are.
func (r *Result) tail(f io.ReaderAt, rel string, headEnd, size int64, kind fileKind) {
	off := max(size-tailBytes, headEnd)
	if off >= size {
		return
	}
	buf := make([]byte, size-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && err != io.EOF {
		return
	}
	r.read += int64(n)
	before := len(r.Findings)
	kind.skillMD = false // its frontmatter is in the head
	data := buf[:n]
	if off > headEnd { // it starts within a line
		data = wholeLines(data, true)
	}
	r.text(rel, data, kind)
	for i := before; i < len(r.Findings); i++ {
		r.Findings[i].Line = 0
		r.Findings[i].Reason = fmt.Sprintf("in the last %d KiB (line not counted): %s", tailBytes>>10, r.Findings[i].Reason)
	}
}

// wholeLines drops the partial line at the end of b (fromEnd false) or at
// its start (fromEnd true), where a read cut it, when b has a newline.
func wholeLines(b []byte, fromEnd bool) []byte {
	if fromEnd {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return b[i+1:]
		}
		return b
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	return b
}

// underScripts reports whether rel is inside a folder named scripts.
func underScripts(rel string) bool {
	dir := path.Dir(rel)
	return slices.Contains(strings.Split(dir, "/"), "scripts")
}

// fileKind is what classify found out about a file.
type fileKind struct {
	binary   string // "native", "archive", "data" (other binary) or ""
	what     string // e.g. "ELF executable", "zip"
	code     bool   // scripts and source files
	markdown bool
	skillMD  bool // the root SKILL.md
	// disguised is the extension of a file whose content does not match
	// it (a script named logo.png), else "".
	disguised string
}

// dataMagic lists the leading bytes of common data formats by extension.
// It and isCodeExt are a table and a switch rather than maps: a map
// literal is built at every start of every program linking the package
// (the CLI, and the sandbox's init process, which is the same binary).
var dataMagic = []struct {
	ext   string
	magic []string
}{
	{".pdf", []string{"%PDF-"}},
	{".png", []string{"\x89PNG\r\n\x1a\n"}},
	{".jpg", []string{"\xff\xd8\xff"}},
	{".jpeg", []string{"\xff\xd8\xff"}},
	{".gif", []string{"GIF87a", "GIF89a"}},
	{".ttf", []string{"\x00\x01\x00\x00", "true", "OTTO"}},
	{".otf", []string{"OTTO", "\x00\x01\x00\x00"}},
	{".woff", []string{"wOFF"}},
	{".woff2", []string{"wOF2"}},
	{".docx", []string{"PK\x03\x04"}},
	{".xlsx", []string{"PK\x03\x04"}},
	{".pptx", []string{"PK\x03\x04"}},
}

// magicOf returns the leading bytes a file with extension ext starts
// with, and whether dataMagic lists the extension.
func magicOf(ext string) ([]string, bool) {
	for _, d := range dataMagic {
		if d.ext == ext {
			return d.magic, true
		}
	}
	return nil, false
}

// isCodeExt reports whether ext is the extension of a script or source
// file.
func isCodeExt(ext string) bool {
	switch ext {
	case ".py", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs",
		".ts", ".mts", ".cts", ".rb", ".pl", ".ps1", ".php",
		".go", ".lua", ".r", ".jl", ".swift", ".kt", ".java",
		".cs", ".rs", ".c", ".cc", ".cpp", ".h", ".bat", ".cmd":
		return true
	}
	return false
}

var archiveExts = []string{".zip", ".tar", ".tgz", ".tar.gz", ".gz", ".bz2", ".xz", ".zst", ".7z", ".rar",
	".jar", ".war", ".whl", ".egg", ".apk", ".deb", ".rpm", ".cab", ".msi", ".dmg", ".iso", ".cpio", ".lz", ".lzma"}

// officeExts are zip files by design; dataExts are binary formats whose
// bytes may happen to contain no NUL early on (a PDF's text header).
var (
	officeExts = []string{".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".docm", ".xlsm", ".pptm", ".epub"}
	dataExts   = []string{".pdf", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".tif", ".tiff",
		".ttf", ".otf", ".woff", ".woff2", ".eot", ".mp3", ".mp4", ".wav", ".ogg", ".webm", ".mov", ".sqlite", ".db"}
)

// classify looks at a file's name, first bytes and execute bit.
func classify(rel string, data []byte, exec bool) fileKind {
	lower := strings.ToLower(rel)
	ext := path.Ext(lower)
	k := fileKind{
		code:     isCodeExt(ext) || underScripts(rel) || bytes.HasPrefix(data, []byte("#!")),
		markdown: ext == ".md" || ext == ".markdown" || ext == ".mdx",
		skillMD:  rel == "SKILL.md" || rel == "skill.md",
	}
	head := data[:min(len(data), 512)]
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		k.binary, k.what = "native", "ELF executable"
	case hasPrefixAny(head, "\xfe\xed\xfa\xce", "\xfe\xed\xfa\xcf", "\xce\xfa\xed\xfe", "\xcf\xfa\xed\xfe", "\xca\xfe\xba\xbe"):
		k.binary, k.what = "native", "Mach-O executable"
	case bytes.HasPrefix(head, []byte("MZ")) && (ext == ".exe" || ext == ".dll" || ext == ".sys" || ext == ".scr" || len(head) >= 64 && bytes.Contains(data[:min(len(data), 1024)], []byte("PE\x00\x00"))):
		k.binary, k.what = "native", "Windows PE executable"
	case bytes.HasPrefix(head, []byte("\x00asm")):
		k.binary, k.what = "native", "WebAssembly module"
	case hasSuffixAny(lower, officeExts...), hasSuffixAny(lower, dataExts...):
		if magic, ok := magicOf(ext); ok && !hasPrefixAny(head, magic...) {
			// Named as data but not that format: read it as text.
			k.disguised = ext
			break
		}
		k.binary = "data"
	case hasSuffixAny(lower, archiveExts...):
		k.binary, k.what = "archive", strings.TrimPrefix(ext, ".")
	case hasPrefixAny(head, "PK\x03\x04", "PK\x05\x06"):
		k.binary, k.what = "archive", "zip"
	case hasPrefixAny(head, "\x1f\x8b", "7z\xbc\xaf\x27\x1c", "Rar!\x1a\x07", "BZh", "\xfd7zXZ\x00", "\x28\xb5\x2f\xfd"):
		k.binary, k.what = "archive", "compressed"
	case len(head) > 262 && string(head[257:262]) == "ustar":
		k.binary, k.what = "archive", "tar"
	case bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 && !isCodeExt(ext) && !bytes.HasPrefix(data, []byte("#!")) && !exec &&
		!k.markdown && !k.skillMD && ext != ".txt":
		// A NUL byte makes other files binary data; not a script's nor
		// an executable's: bash, perl and node run a script with a NUL
		// in a comment, so one NUL must not hide the rest of it from
		// the text rules. Nor Markdown's or plain text's: the agent reads
		// them as instructions whatever a NUL does to a terminal.
		k.binary = "data"
	}
	return k
}

func hasPrefixAny(b []byte, prefixes ...string) bool {
	for _, p := range prefixes {
		if bytes.HasPrefix(b, []byte(p)) {
			return true
		}
	}
	return false
}

func hasSuffixAny(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// Each scans every folder in dirs concurrently and calls fn with each
// folder, its result and the error scanning it (as Skill returns them) in
// the order of dirs, as soon as that folder's scan and all before it are
// done. Workers and memory are bounded as in validate.Each
// (internal/ordered): at most a few hundred results wait for fn. If fn
// returns an error, no more folders are started and Each returns it.
func Each(dirs []string, fn func(dir string, r *Result, err error) error) error {
	type scanned struct {
		r   *Result
		err error
		dir string
	}
	return ordered.Each(len(dirs), func(i int) scanned {
		r, err := Skill(dirs[i])
		return scanned{r, err, dirs[i]}
	}, func(s scanned) error { return fn(s.dir, s.r, s.err) })
}
