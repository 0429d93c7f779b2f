//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// newNonce returns a random hex string that marks one probe run.
func newNonce() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 16)
	}
	return hex.EncodeToString(b)
}

// tcpCounter is a host TCP listener that counts accepted connections and
// answers each with a tiny HTTP response.
type tcpCounter struct {
	ln    net.Listener
	count atomic.Int64
	wg    sync.WaitGroup
}

func newTCPCounter() (*tcpCounter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serveCounter(ln), nil
}

func serveCounter(ln net.Listener) *tcpCounter {
	c := &tcpCounter{ln: ln}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.count.Add(1)
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 4096)
				conn.Read(buf)
				conn.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n"))
			}()
		}
	}()
	return c
}

func (c *tcpCounter) port() string {
	return strconv.Itoa(c.ln.Addr().(*net.TCPAddr).Port)
}

func (c *tcpCounter) close() { c.ln.Close(); c.wg.Wait() }

// udpCounter is a host UDP "DNS server" on 127.0.0.1 that counts queries and
// answers each with the query echoed back as a response.
type udpCounter struct {
	pc    net.PacketConn
	count atomic.Int64
	done  chan struct{}
}

func newUDPCounter() (*udpCounter, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	u := &udpCounter{pc: pc, done: make(chan struct{})}
	go func() {
		defer close(u.done)
		buf := make([]byte, 1500)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			u.count.Add(1)
			if n >= 12 {
				resp := append([]byte(nil), buf[:n]...)
				resp[2] |= 0x80 // QR: response
				pc.WriteTo(resp, addr)
			}
		}
	}()
	return u, nil
}

func (u *udpCounter) port() string {
	return strconv.Itoa(u.pc.LocalAddr().(*net.UDPAddr).Port)
}

func (u *udpCounter) close() { u.pc.Close(); <-u.done }

// unixCounter is a host unix-socket listener (a path, or "@name" for the
// abstract namespace) that counts accepted connections.
type unixCounter struct {
	name string
	tcp  *tcpCounter
}

func newUnixCounter(name string) (*unixCounter, error) {
	ln, err := net.Listen("unix", name)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(name, "@") {
		os.Chmod(name, 0o777)
	}
	return &unixCounter{name: name, tcp: serveCounter(ln)}, nil
}

func (u *unixCounter) close() {
	u.tcp.close()
	if !strings.HasPrefix(u.name, "@") {
		os.Remove(u.name)
	}
}

// sleeper is a host process the probes try to see, signal or trace. Its
// argv[0] and environment carry a nonce.
type sleeper struct {
	cmd    *exec.Cmd
	exited atomic.Bool
	done   chan struct{}
}

func newSleeper(nonce string) (*sleeper, error) {
	path, err := lookSystem("sleep")
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: path,
		Args: []string{"skill-sandbox-sleeper-" + nonce, "120"},
		Env:  []string{"SKILL_SANDBOX_PROBE_SECRET=" + nonce, "PATH=" + systemPath},
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &sleeper{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		s.exited.Store(true)
		close(s.done)
	}()
	return s, nil
}

func (s *sleeper) pid() int { return s.cmd.Process.Pid }

// alive reports whether the sleeper still runs, after giving a delivered
// signal a moment to take effect.
func (s *sleeper) alive() bool {
	select {
	case <-s.done:
		return false
	case <-time.After(150 * time.Millisecond):
		return !s.exited.Load()
	}
}

func (s *sleeper) close() {
	s.cmd.Process.Kill()
	<-s.done
}

// procsWith returns the pids of host processes whose command line or
// environment contains marker.
func procsWith(marker string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		for _, f := range []string{"cmdline", "environ"} {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), f))
			if err == nil && strings.Contains(string(b), marker) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// countCmdline counts host processes whose command line contains marker.
func countCmdline(marker string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			n++
		}
	}
	return n
}

// killAll SIGKILLs the given pids.
func killAll(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// poll calls fn every interval until ctx ends.
func poll(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		fn()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tracerPid reads TracerPid from /proc/PID/status.
func tracerPid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// freePort returns a TCP port that was free a moment ago.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// copyTree copies the regular files and folders of src into dst.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, info.Mode().Perm())
		}
		return nil
	})
}
