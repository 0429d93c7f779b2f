//go:build linux && (amd64 || arm64)

package initplan

import (
	"strings"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"

	"golang.org/x/sys/unix"
)

// Short names for the argument kinds.
var (
	imm = initproc.Imm
	num = initproc.Int
	reg = initproc.Reg
)

// ref is the address of s (NUL-terminated) in the program's data.
func (c *compiler) ref(s string) initproc.Arg { return initproc.Ref(c.b.String(s)) }

// mount emits mount(2); data "" passes NULL, as x/sys does.
func (c *compiler) mount(desc, src, dst, fstype string, flags uintptr, data string, opts ...initproc.Opt) int {
	d := imm(0)
	if data != "" {
		d = c.ref(data)
	}
	return c.b.Sys(desc, unix.SYS_MOUNT, []initproc.Arg{c.ref(src), c.ref(dst), c.ref(fstype), imm(uint64(flags)), d}, opts...)
}

// mountFD bind-mounts the file open on the descriptor in r onto dst,
// through its /proc/self/fd path: mount(2) follows the magic link to the
// very file opened, whatever its path has become.
func (c *compiler) mountFD(desc string, r initproc.Register, dst string, flags uintptr, opts ...initproc.Opt) int {
	c.b.FdPath(reg(r), c.fdBuf)
	return c.b.Sys(desc, unix.SYS_MOUNT, []initproc.Arg{initproc.Ref(c.fdBuf), c.ref(dst), c.ref(""), imm(uint64(flags)), imm(0)}, opts...)
}

// closeReg closes the descriptor in r (errors ignored).
func (c *compiler) closeReg(r initproc.Register) {
	c.b.Sys("close", unix.SYS_CLOSE, []initproc.Arg{reg(r)}, initproc.IgnoreErrors())
}

// mkdir creates path; exists says an existing one is fine.
func (c *compiler) mkdir(desc, path string, mode uint32, exists bool) {
	var opts []initproc.Opt
	if exists {
		opts = append(opts, initproc.OkOn(unix.EEXIST))
	}
	c.b.Sys(desc, unix.SYS_MKDIRAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(path), imm(uint64(mode))}, opts...)
}

// mkdirAll creates path and the folders above it that are below root
// (which exists), as os.MkdirAll would; desc names the failure.
func (c *compiler) mkdirAll(desc, root, path string, mode uint32) {
	rest, ok := strings.CutPrefix(path, root)
	if !ok {
		c.mkdir(desc, path, mode, true)
		return
	}
	dir := root
	for _, name := range strings.Split(rest, "/") {
		if name == "" {
			continue
		}
		dir += "/" + name
		c.mkdir(desc, dir, mode, true)
	}
}

// createFile creates path as an empty file (an existing one is fine) to
// mount on: mknodat makes a regular file in one call, without opening it.
// (Whatever else is there already fails the mount that follows.)
func (c *compiler) createFile(desc, path string) {
	c.b.Sys(desc, unix.SYS_MKNODAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(path), imm(unix.S_IFREG | 0o644), imm(0)},
		initproc.OkOn(unix.EEXIST))
}

// placeholder creates path as an empty folder or file to mount on; an
// existing one is fine.
func (c *compiler) placeholder(desc, path string, folder bool) {
	if folder {
		c.mkdir(desc, path, 0o755, true)
		return
	}
	c.createFile(desc, path)
}

// mkMountPoint creates path (and its parents below root) as a folder or
// an empty file; an existing one is fine.
func (c *compiler) mkMountPoint(desc, root, path string, folder bool) {
	if folder {
		c.mkdirAll(desc, root, path, 0o755)
		return
	}
	if i := strings.LastIndexByte(path, '/'); i > len(root) {
		c.mkdirAll(desc, root, path[:i], 0o755)
	}
	c.createFile(desc, path)
}

// symlink creates a symlink at path to target.
func (c *compiler) symlink(desc, target, path string) {
	c.b.Sys(desc, unix.SYS_SYMLINKAT, []initproc.Arg{c.ref(target), num(unix.AT_FDCWD), c.ref(path)})
}

// writeFile writes content to path, created or truncated, mode 0644.
func (c *compiler) writeFile(desc, path, content string) {
	c.b.Sys(desc, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(path),
		imm(unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC | unix.O_CLOEXEC), imm(0o644)}, initproc.Into(c.tmp))
	d := c.b.Bytes([]byte(content))
	c.b.Sys(desc, unix.SYS_WRITE, []initproc.Arg{reg(c.tmp), initproc.Ref(d), imm(uint64(len(content)))})
	c.closeReg(c.tmp)
}

// mountSetattr emits mount_setattr(2) on path (AT_FDCWD) or, with "", on
// the descriptor in r (AT_EMPTY_PATH), with set and flags.
func (c *compiler) mountSetattr(desc string, r initproc.Register, path string, flags uint64, set uint64, opts ...initproc.Opt) int {
	attr := unix.MountAttr{Attr_set: set}
	d := initproc.Struct(c.b, &attr)
	dir, p := num(unix.AT_FDCWD), c.ref(path)
	if path == "" {
		dir, flags = reg(r), flags|unix.AT_EMPTY_PATH
	}
	return c.b.Sys(desc, unix.SYS_MOUNT_SETATTR, []initproc.Arg{dir, p, imm(flags), initproc.Ref(d), imm(uint64(unsafe.Sizeof(attr)))}, opts...)
}

// statField loads a field of the struct stat at c.statBuf into r.
func (c *compiler) statField(r initproc.Register, off, size uintptr) {
	c.b.Load(r, c.statBuf+initproc.Data(off), int(size))
}

// fstat fills c.statBuf from the descriptor in fd.
func (c *compiler) fstat(desc string, fd initproc.Register) {
	c.b.Sys(desc, unix.SYS_FSTAT, []initproc.Arg{reg(fd), initproc.Ref(c.statBuf)})
}

// The fields of struct stat the checks read.
var (
	statDev  = unsafe.Offsetof(unix.Stat_t{}.Dev)
	statIno  = unsafe.Offsetof(unix.Stat_t{}.Ino)
	statMode = unsafe.Offsetof(unix.Stat_t{}.Mode)
	devSize  = unsafe.Sizeof(unix.Stat_t{}.Dev)
	inoSize  = unsafe.Sizeof(unix.Stat_t{}.Ino)
	modeSize = unsafe.Sizeof(unix.Stat_t{}.Mode)
)

// assertType fails with desc, as a swap, unless c.statBuf is of the file
// type typ (S_IFDIR, S_IFREG).
func (c *compiler) assertType(desc string, typ uint32, swapped bool) int {
	c.statField(c.tmp2, statMode, modeSize)
	c.b.And(c.tmp2, reg(c.tmp2), imm(unix.S_IFMT))
	return c.b.Assert(desc, initproc.Eq, reg(c.tmp2), imm(uint64(typ)), swapped)
}

// assertSame fails, as a swap with msg, unless c.statBuf is the file dev
// and ino (stageconfig.SameGrant); dev and ino 0 check nothing.
func (c *compiler) assertSame(msg string, dev, ino uint64) {
	if dev == 0 && ino == 0 {
		return
	}
	c.statField(c.tmp2, statDev, devSize)
	c.changed[c.b.Assert(msg, initproc.Eq, reg(c.tmp2), imm(dev), true)] = msg
	c.statField(c.tmp2, statIno, inoSize)
	c.changed[c.b.Assert(msg, initproc.Eq, reg(c.tmp2), imm(ino), true)] = msg
}
