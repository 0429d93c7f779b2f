// Command dist writes the release of one commit: an archive per platform
// (tar.gz, zip for Windows) holding the binary, LICENSE, README.md, the man
// page and the shell completions; Debian packages for linux/amd64 and
// linux/arm64; and SHA256SUMS. Two runs on the same commit write the same
// bytes: the binaries are built with -trimpath and without VCS stamping,
// every timestamp is -epoch (the commit's time), entries are sorted and
// owned by 0:0, and gzip writes no name or time. "make dist" runs it.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// target is one platform the release is built for.
type target struct{ goos, goarch string }

// String returns t as GOOS/GOARCH.
func (t target) String() string { return t.goos + "/" + t.goarch }

// exe returns the binary's file name on t.
func (t target) exe() string {
	if t.goos == "windows" {
		return "skill-sandbox.exe"
	}
	return "skill-sandbox"
}

// config is one run of dist.
type config struct {
	out        string // output folder
	version    string // git describe of the commit
	commit     string // the commit's hash, "" if unknown
	epoch      int64  // every timestamp, in seconds since 1970
	maintainer string // the packages' Maintainer field
	targets    []target
	debArchs   []string // GOARCHes of linux targets packaged as .deb
	root       string   // the module's root folder
	env        []string // added to the go command's environment
	log        io.Writer
}

// defaultTargets are the release's platforms: static Linux builds and
// macOS without cgo, as cross-compiling leaves no choice (docs/install.md).
func defaultTargets() []target {
	return []target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}}
}

func main() {
	os.Exit(mainErr(os.Args[1:], os.Stderr))
}

// mainErr parses args, runs dist and returns the exit status.
func mainErr(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{log: stderr}
	var epoch, targets, debs, pythonOnly string
	fs.StringVar(&cfg.out, "out", "dist", "output `DIR`")
	fs.StringVar(&cfg.version, "version", "", "the release's version (git describe --tags --always --dirty)")
	fs.StringVar(&cfg.commit, "commit", "", "the commit's full `HASH` (git rev-parse HEAD), to tell it from a tag in -version")
	fs.StringVar(&epoch, "epoch", "", "timestamp of every file, `SECONDS` since 1970 (the commit's time)")
	fs.StringVar(&cfg.maintainer, "maintainer", "skill-sandbox maintainers <maintainers@skill-sandbox.invalid>", "Maintainer field of the .deb packages")
	fs.StringVar(&targets, "targets", "", "comma-separated GOOS/GOARCH list (default all five)")
	fs.StringVar(&debs, "deb", "amd64,arm64", "comma-separated linux GOARCHes to package as .deb (\"\": none)")
	fs.StringVar(&pythonOnly, "python-only", "", "write only the Python sdist and this machine's wheel, carrying the linux binary `FILE` (no build; for tests)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "dist: error: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	if cfg.version == "" {
		return usage("-version is empty (make dist takes it from git describe; set VERSION outside a git checkout)")
	}
	e, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil || e < 0 {
		return usage("-epoch %q is not a time in seconds (make dist takes it from the commit; set SOURCE_DATE_EPOCH)", epoch)
	}
	cfg.epoch = e
	cfg.targets = defaultTargets()
	if targets != "" {
		if cfg.targets, err = parseTargets(targets); err != nil {
			return usage("%v", err)
		}
	}
	if debs != "" {
		cfg.debArchs = strings.Split(debs, ",")
	}
	if cfg.root, err = os.Getwd(); err != nil {
		fmt.Fprintf(stderr, "dist: error: %v\n", err)
		return 1
	}
	if pythonOnly != "" {
		cfg.targets = []target{{"linux", runtime.GOARCH}}
		_, err := cfg.writePythonOnly(pythonOnly)
		if err != nil {
			fmt.Fprintf(stderr, "dist: error: %v\n", err)
			return 1
		}
		return 0
	}
	if err := dist(cfg); err != nil {
		fmt.Fprintf(stderr, "dist: error: %v\n", err)
		return 1
	}
	return 0
}

// parseTargets parses "linux/amd64,darwin/arm64".
func parseTargets(s string) ([]target, error) {
	var out []target
	for _, t := range strings.Split(s, ",") {
		goos, goarch, ok := strings.Cut(t, "/")
		if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
			return nil, fmt.Errorf("target %q is not GOOS/GOARCH", t)
		}
		out = append(out, target{goos, goarch})
	}
	return out, nil
}

// dist builds and writes the release described by cfg.
func dist(cfg config) error {
	// A version no package can carry fails before anything is built.
	if len(cfg.debArchs) > 0 {
		if _, err := debVersion(cfg.version, cfg.commit, cfg.epoch); err != nil {
			return err
		}
	}
	if _, err := pyVersion(cfg.version, cfg.commit, cfg.epoch); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "skill-sandbox-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	bins := map[target]string{}
	for _, t := range cfg.targets {
		fmt.Fprintf(cfg.log, "dist: building %s %s\n", cfg.version, t)
		bin := filepath.Join(tmp, t.goos+"-"+t.goarch, t.exe())
		if err := cfg.build(t, bin); err != nil {
			return err
		}
		bins[t] = bin
	}
	// The man page and completions come from a binary this machine runs.
	host := target{runtime.GOOS, runtime.GOARCH}
	hostBin, ok := bins[host]
	if !ok {
		hostBin = filepath.Join(tmp, "host", host.exe())
		if err := cfg.build(host, hostBin); err != nil {
			return err
		}
	}
	docs, err := generatedDocs(hostBin)
	if err != nil {
		return err
	}
	var written []string
	for _, t := range cfg.targets {
		name, err := cfg.writeArchive(t, bins[t], docs)
		if err != nil {
			return err
		}
		written = append(written, name)
	}
	debs, err := cfg.writeDebs(tmp, bins, docs)
	if err != nil {
		return err
	}
	written = append(written, debs...)
	py, err := cfg.writePython(bins)
	if err != nil {
		return err
	}
	written = append(written, py...)
	return writeSums(cfg.out, written)
}

// build compiles the command for t into bin: static, reproducible, with
// the version linked in.
func (cfg config) build(t target, bin string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.version="+cfg.version, "-o", bin, "./cmd/skill-sandbox")
	cmd.Dir = cfg.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
	cmd.Env = append(cmd.Env, cfg.env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %v\n%s", t, err, stderr.Bytes())
	}
	return nil
}

// docs are the files the binary writes about itself.
type docs struct {
	man, bash, zsh, fish []byte
}

// generatedDocs runs bin for its man page and completion scripts.
func generatedDocs(bin string) (docs, error) {
	var d docs
	for _, g := range []struct {
		dst  *[]byte
		args []string
	}{{&d.man, []string{"man"}}, {&d.bash, []string{"completion", "bash"}}, {&d.zsh, []string{"completion", "zsh"}}, {&d.fish, []string{"completion", "fish"}}} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, g.args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return d, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(g.args, " "), err, stderr.Bytes())
		}
		*g.dst = out
	}
	return d, nil
}

// entry is one file of an archive or package.
type entry struct {
	name string // slash-separated, relative
	mode os.FileMode
	data []byte
}

// readEntry reads the file at path as the archive entry name.
func readEntry(name, path string, mode os.FileMode) (entry, error) {
	data, err := os.ReadFile(path)
	return entry{name: name, mode: mode, data: data}, err
}

// archiveEntries returns the files of t's archive, under a folder named
// after the archive.
func (cfg config) archiveEntries(t target, bin string, d docs) ([]entry, error) {
	var files []entry
	for _, f := range []struct {
		name, path string
		mode       os.FileMode
	}{{t.exe(), bin, 0o755}, {"LICENSE", filepath.Join(cfg.root, "LICENSE"), 0o644}, {"README.md", filepath.Join(cfg.root, "README.md"), 0o644}} {
		e, err := readEntry(f.name, f.path, f.mode)
		if err != nil {
			return nil, err
		}
		files = append(files, e)
	}
	files = append(files,
		entry{"man/skill-sandbox.1", 0o644, d.man},
		entry{"completions/skill-sandbox.bash", 0o644, d.bash},
		entry{"completions/_skill-sandbox", 0o644, d.zsh},
		entry{"completions/skill-sandbox.fish", 0o644, d.fish})
	if t.goos == "linux" {
		e, err := readEntry("apparmor/skill-sandbox", filepath.Join(cfg.root, "packaging", "apparmor", "skill-sandbox"), 0o644)
		if err != nil {
			return nil, err
		}
		files = append(files, e)
	}
	return files, nil
}

// writeArchive writes t's archive and returns its file name.
func (cfg config) writeArchive(t target, bin string, d docs) (string, error) {
	files, err := cfg.archiveEntries(t, bin, d)
	if err != nil {
		return "", err
	}
	base := "skill-sandbox-" + cfg.version + "-" + t.goos + "-" + t.goarch
	for i := range files {
		files[i].name = base + "/" + files[i].name
	}
	mtime := time.Unix(cfg.epoch, 0).UTC()
	var buf bytes.Buffer
	name := base + ".tar.gz"
	if t.goos == "windows" {
		name = base + ".zip"
		err = writeZip(&buf, files, mtime)
	} else {
		err = writeTarGz(&buf, files, mtime)
	}
	if err != nil {
		return "", fmt.Errorf("%s: %v", name, err)
	}
	return name, os.WriteFile(filepath.Join(cfg.out, name), buf.Bytes(), 0o644)
}

// writeSums writes SHA256SUMS for the files in dir, in sha256sum's format.
func writeSums(dir string, names []string) error {
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	if len(names) == 0 {
		return errors.New("nothing was written")
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}
