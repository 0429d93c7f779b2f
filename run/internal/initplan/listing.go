//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"

	"golang.org/x/sys/unix"
)

// A plan's listing says what the init process's program does in the
// sandbox's terms, one step a line, as bubblewrap's setup operations do:
// the mounts, the Landlock rules, the seccomp filter, the limits. The
// compiler notes each step where it emits the operations that do it, from
// the values it emits them from, and under the layer block and the
// condition they run under: the listing follows the program, it is not a
// second account of the config. A run's compile keeps none (the strings
// would cost every start); Describe asks for it.

// step is one noted step of the program.
type step struct {
	// layer is the layer whose block holds the step, "" for none.
	layer string
	// cond is when the step runs, "" for always ("mountns applied").
	cond string
	text string
	// host names what of the host's files the step comes from (its
	// system folders, the entries of its /etc), "" when it comes from the
	// config alone.
	host string
}

// Describe compiles in.Config as Compile does and returns the program's
// listing: one line a step, the layer it builds first ("-" for none,
// "landlock" for the Landlock layers) and the condition it runs under
// last, as
//
//	mountns       rbind /usr /usr
//	rlimits       rlimit NOFILE 1024
//	landlock      landlock rw /tmp  [if mountns applied]
//
// A Landlock rule shows the rights asked for, before the kernel's ABI
// narrows them to those it handles (the ruleset's line says which).
func Describe(in Input) ([]string, error) { return describe(in, false) }

// DescribeGrouped is Describe with the steps that come from the host's
// files (its system folders, the entries of its /etc) one line per run of
// them, as "{host: system folders}": a listing that reads the same on
// any host with the same config.
func DescribeGrouped(in Input) ([]string, error) { return describe(in, true) }

// describe compiles in with a listing kept; byHost as for listing.
func describe(in Input, byHost bool) ([]string, error) {
	if err := checkInput(in); err != nil {
		return nil, err
	}
	c := newCompiler(in)
	c.listing = true
	p, err := c.compile()
	if err != nil {
		return nil, err
	}
	return p.listing(byHost), nil
}

// listing renders the plan's steps. With byHost the steps that come from
// the host's files are one line per run of them ("{host: system
// folders}"), which holds on any host: the golden tests' form.
func (p *Plan) listing(byHost bool) []string {
	var out []string
	for i, s := range p.steps {
		text := s.text
		if byHost && s.host != "" {
			if i > 0 {
				prev := p.steps[i-1]
				if prev.host == s.host && prev.layer == s.layer && prev.cond == s.cond {
					continue
				}
			}
			text = "{host: " + s.host + "}"
		}
		layer := s.layer
		if layer == "" {
			layer = "-"
		}
		line := fmt.Sprintf("%-13s %s", layer, text)
		if s.cond != "" {
			line += "  [if " + s.cond + "]"
		}
		out = append(out, line)
	}
	return out
}

// note records a step made of words, when the compiler keeps a listing.
func (c *compiler) note(words ...string) {
	if !c.listing {
		return
	}
	c.steps = append(c.steps, step{layer: c.noteLayer, cond: c.noteCond, text: strings.Join(words, " "), host: c.noteHost})
}

// notef records a step formatted as fmt.Sprintf does. Its callers test
// c.listing first: boxing the arguments would cost every compile.
func (c *compiler) notef(format string, args ...any) {
	if c.listing {
		c.note(fmt.Sprintf(format, args...))
	}
}

// hostSteps notes the steps of emit as coming from the host's group.
func (c *compiler) hostSteps(group string, emit func()) {
	outer := c.noteHost
	c.noteHost = group
	emit()
	c.noteHost = outer
}

// when notes the steps of emit as running only when cond holds.
func (c *compiler) when(cond string, emit func()) {
	outer := c.noteCond
	c.noteCond = cond
	emit()
	c.noteCond = outer
}

// mountAttrWords names the mount attributes of set, as mount(8) does.
func mountAttrWords(set uint64) string {
	var w []string
	for _, a := range []struct {
		bit  uint64
		name string
	}{{unix.MOUNT_ATTR_RDONLY, "ro"}, {unix.MOUNT_ATTR_NOSUID, "nosuid"}, {unix.MOUNT_ATTR_NODEV, "nodev"}, {unix.MOUNT_ATTR_NOEXEC, "noexec"}} {
		if set&a.bit != 0 {
			w = append(w, a.name)
		}
	}
	return strings.Join(w, ",")
}

// accessWord names a Landlock rule's rights as a grant rule's access does
// ("r", "rx", "rw", "l"), or "dev" for the devices' and a number for
// anything else.
func accessWord(access uint64) string {
	switch access {
	case llRead:
		return "r"
	case llReadExec:
		return "rx"
	case llReadWrite:
		return "rw"
	case llDevice:
		return "dev"
	case unix.LANDLOCK_ACCESS_FS_READ_DIR:
		return "l"
	}
	return fmt.Sprintf("%#x", access)
}

// rulesetWords names what a Landlock ruleset handles.
func rulesetWords(attr llRulesetAttr) string {
	var w []string
	if attr.handledFS != 0 {
		w = append(w, fmt.Sprintf("fs(%#x)", attr.handledFS))
	}
	if attr.handledNet != 0 {
		w = append(w, "tcp bind,connect")
	}
	if attr.scoped != 0 {
		w = append(w, "scope signal,abstract-unix")
	}
	return strings.Join(w, "; ")
}

// policyWords names what a seccomp filter of pol denies beyond the
// filter every run gets (see seccomp.Policy).
func policyWords(pol seccomp.Policy) string {
	var w []string
	for _, f := range []struct {
		on   bool
		text string
	}{
		{pol.HostNet, "no UDP"},
		{pol.SharedNet, "no netlink"},
		{pol.NoMount, "no unix sockets but stream pairs"},
		{pol.NoIPC, "no System V IPC or POSIX queues"},
		{pol.NoPID, "no setsid"},
		{pol.NoMemCgroup, "no memfd_create, shmget or socket buffer raise"},
		{pol.NoQuotas, "no new inotify or fanotify"},
		{pol.NotifyEpollAdd, "epoll watches counted by the supervisor"},
	} {
		if f.on {
			w = append(w, f.text)
		}
	}
	if len(w) == 0 {
		return "the base filter"
	}
	return "the base filter; " + strings.Join(w, ", ")
}

// layersWord names the layers of bits, joined with "+".
func layersWord(bits uint32) string {
	var w []string
	for _, l := range layersOf(bits) {
		w = append(w, string(l))
	}
	return strings.Join(w, "+")
}
