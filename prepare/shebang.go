package prepare

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
)

// maxScriptBytes bounds the bin/ files rewriteShebangs reads: console
// scripts are a few hundred bytes; larger files are left alone.
const maxScriptBytes = 1 << 20

// maxShebang is the longest "#!" line the kernel reads whole
// (BINPRM_BUF_SIZE, 256 bytes since Linux 5.1, with its newline).
const maxShebang = 255

// plainPath matches the paths written into a "#!" line: nothing a
// shell or the kernel's "#!" parser would split or interpret.
var plainPath = &lazyre.Regexp{Expr: `^/[A-Za-z0-9/._+-]*$`}

// rewriteShebangs points the console scripts of the environment built at
// built, to be installed at final, at final's interpreter: pip wrote
// built's path into their "#!" line (or, for a long one, into the
// "exec" line of its /bin/sh form), and runs see the environment at
// final, where the cache is mounted at its own path. Only regular files
// directly in bin/ whose first line names built's bin/ are changed, each
// replaced by a new file (never written through a link or a hard link);
// the rest, and every file when final is not a plain path or the line
// would be too long for the kernel, are left as they are. It returns how
// many it rewrote.
func rewriteShebangs(built, final string) (int, error) {
	if !plainPath.Get().MatchString(final) {
		return 0, nil
	}
	bin := filepath.Join(built, "bin")
	// The build's code may have made bin/ a link out of the build:
	// the files it leads to are not the environment's to rewrite.
	if fi, err := os.Lstat(bin); err != nil {
		return 0, err
	} else if !fi.IsDir() {
		return 0, fmt.Errorf("%s is not a folder (%s)", bin, fi.Mode().Type())
	}
	entries, err := os.ReadDir(bin)
	if err != nil {
		return 0, err
	}
	oldPrefix, newPrefix := []byte(built+"/bin/"), []byte(final+"/bin/")
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil || fi.Size() > maxScriptBytes {
			continue
		}
		path := filepath.Join(bin, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			return n, err
		}
		out, ok := rewriteHeader(data, oldPrefix, newPrefix)
		if !ok {
			continue
		}
		if err := replaceFile(path, out, fi.Mode().Perm()); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// rewriteHeader returns data with oldPrefix made newPrefix in its "#!"
// line ("#!OLD/bin/python3"), or in the second line of pip's /bin/sh
// form ("#!/bin/sh", then an exec line naming OLD/bin/python3); ok is false
// when data has neither or the result would be too long.
func rewriteHeader(data, oldPrefix, newPrefix []byte) (out []byte, ok bool) {
	line, rest, _ := bytes.Cut(data, []byte("\n"))
	switch {
	case bytes.HasPrefix(line, append([]byte("#!"), oldPrefix...)):
		line = append(append([]byte("#!"), newPrefix...), line[2+len(oldPrefix):]...)
		if len(line) > maxShebang {
			return nil, false
		}
		return append(append(line, '\n'), rest...), true
	case string(line) == "#!/bin/sh":
		second, tail, _ := bytes.Cut(rest, []byte("\n"))
		i := bytes.Index(second, oldPrefix)
		if !bytes.HasPrefix(second, []byte("'''exec' ")) || i < 0 {
			return nil, false
		}
		var b bytes.Buffer // a new buffer: line, second and tail share data
		b.Write(line)
		b.WriteByte('\n')
		b.Write(second[:i])
		b.Write(newPrefix)
		b.Write(second[i+len(oldPrefix):])
		b.WriteByte('\n')
		b.Write(tail)
		return b.Bytes(), true
	}
	return nil, false
}

// replaceFile replaces path by a new file holding data with perm: a new
// inode, so a link or a hard link at path is never written through.
func replaceFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rewrite-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := firstErr(werr, cerr, os.Chmod(tmp.Name(), perm)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("%s: %v", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
