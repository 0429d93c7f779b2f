package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// processes are the programs the simulation started, stopped at its end.
type processes struct {
	mu    sync.Mutex
	cmds  []*exec.Cmd
	waits map[*exec.Cmd]chan error
}

// start starts cmd with its output in logFile and keeps it.
func (p *processes) start(cmd *exec.Cmd, logFile string) error {
	f, err := os.Create(logFile)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); f.Close() }()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waits == nil {
		p.waits = map[*exec.Cmd]chan error{}
	}
	p.cmds = append(p.cmds, cmd)
	p.waits[cmd] = done
	return nil
}

// wait waits up to d for cmd to end; false if it has not.
func (p *processes) wait(cmd *exec.Cmd, d time.Duration) bool {
	p.mu.Lock()
	done := p.waits[cmd]
	p.mu.Unlock()
	select {
	case err := <-done:
		done <- err // keep it for a later wait
		return true
	case <-time.After(d):
		return false
	}
}

// waitReplicas waits up to d for every serve replica to end.
func (p *processes) waitReplicas(d time.Duration) {
	deadline := time.Now().Add(d)
	for _, c := range p.cmds {
		if len(c.Args) > 1 && c.Args[1] == "serve" {
			p.wait(c, time.Until(deadline))
		}
	}
}

// stopAll sends SIGTERM to what still runs, then SIGKILL after 10 s.
func (p *processes) stopAll() {
	for _, c := range p.cmds {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range p.cmds {
		if !p.wait(c, 10*time.Second) {
			c.Process.Kill()
			p.wait(c, 5*time.Second)
		}
	}
}

// replica is one serve process.
type replica struct {
	n     int
	addr  string // 127.0.0.1:port
	audit string // its audit log
	cmd   *exec.Cmd
	at    time.Time // when it was killed or stopped
}

// kill sends sig and returns the time.
func (r *replica) kill(sig syscall.Signal) time.Time {
	if r.at.IsZero() {
		r.at = time.Now()
		r.cmd.Process.Signal(sig)
	}
	return r.at
}

// freePort returns a loopback address no one listens on now.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startReplicas starts n serve replicas and waits until each is ready.
func startReplicas(ctx context.Context, p *processes, dir, bin string, n int) ([]*replica, error) {
	var reps []*replica
	for i := range n {
		addr, err := freePort()
		if err != nil {
			return nil, err
		}
		r := &replica{n: i, addr: addr, audit: filepath.Join(dir, fmt.Sprintf("audit-%d.jsonl", i))}
		r.cmd = exec.Command(bin, "serve", "--listen", addr, "--tokens", filepath.Join(dir, "tokens.json"),
			"--audit-log", r.audit, "--max-runs", "2", "--queue", "8", "--drain-timeout", "20s")
		r.cmd.Dir = dir
		if err := p.start(r.cmd, filepath.Join(dir, fmt.Sprintf("serve-%d.log", i))); err != nil {
			return nil, err
		}
		reps = append(reps, r)
	}
	for _, r := range reps {
		if err := waitHTTP(ctx, "http://"+r.addr+"/readyz", 20*time.Second); err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("serve-%d.log", r.n)))
			return nil, fmt.Errorf("replica %d: %v\n%s", r.n, err, log)
		}
	}
	return reps, nil
}

// waitHTTP polls url until it answers 200.
func waitHTTP(ctx context.Context, url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not ready after %v: %s", url, d, last)
}

// nginxConf is nginx's configuration: a round-robin upstream of the
// replicas that takes a replica out for 5 s after a failed connection. A
// POST already sent is never retried on another replica (nginx retries
// only idempotent requests), so a run lost with its replica reaches its
// client as a 502.
const nginxConf = `daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log warn;
events { worker_connections 256; }
http {
  access_log %[1]s/nginx-access.log;
  client_body_temp_path %[1]s/nginx-tmp/body;
  proxy_temp_path %[1]s/nginx-tmp/proxy;
  fastcgi_temp_path %[1]s/nginx-tmp/fastcgi;
  uwsgi_temp_path %[1]s/nginx-tmp/uwsgi;
  scgi_temp_path %[1]s/nginx-tmp/scgi;
  upstream serve {
%[2]s  }
  server {
    listen %[3]s;
    location / {
      proxy_pass http://serve;
      proxy_http_version 1.1;
      proxy_read_timeout 120s;
      proxy_next_upstream error timeout;
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`

// startNginx starts nginx in front of the replicas; it returns its address.
func startNginx(ctx context.Context, p *processes, dir string, reps []*replica) (string, error) {
	nginx, err := lookPath("nginx")
	if err != nil {
		return "", err
	}
	addr, err := freePort()
	if err != nil {
		return "", err
	}
	var up strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&up, "    server %s max_fails=1 fail_timeout=5s;\n", r.addr)
	}
	// Workers run as nobody when nginx starts as root: their temporary
	// folder is theirs.
	tmp := filepath.Join(dir, "nginx-tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		return "", err
	}
	os.Chmod(tmp, 0o777)
	os.Chmod(dir, 0o755)
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, up.String(), addr), 0o644); err != nil {
		return "", err
	}
	cmd := exec.Command(nginx, "-p", dir, "-c", conf, "-e", filepath.Join(dir, "nginx-error.log"))
	if err := p.start(cmd, filepath.Join(dir, "nginx.log")); err != nil {
		return "", err
	}
	if err := waitHTTP(ctx, "http://"+addr+"/healthz", 10*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "nginx-error.log"))
		return "", fmt.Errorf("nginx: %v\n%s", err, log)
	}
	return addr, nil
}

// promConf scrapes every replica's /metrics each second.
const promConf = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: skill-sandbox
    authorization:
      credentials: %q
    static_configs:
      - targets: [%s]
`

// startPrometheus starts a Prometheus server scraping the replicas; it
// returns its address.
func startPrometheus(ctx context.Context, p *processes, dir string, reps []*replica, token string) (string, error) {
	prom, err := lookPath("prometheus")
	if err != nil {
		return "", err
	}
	addr, err := freePort()
	if err != nil {
		return "", err
	}
	var targets []string
	for _, r := range reps {
		targets = append(targets, fmt.Sprintf("%q", r.addr))
	}
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, promConf, token, strings.Join(targets, ", ")), 0o600); err != nil {
		return "", err
	}
	cmd := exec.Command(prom, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "prometheus"),
		"--web.listen-address="+addr, "--log.level=warn")
	if err := p.start(cmd, filepath.Join(dir, "prometheus.log")); err != nil {
		return "", err
	}
	if err := waitHTTP(ctx, "http://"+addr+"/-/ready", 30*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
		return "", fmt.Errorf("prometheus: %v\n%s", err, log)
	}
	// Its discovery hands the targets to the scrapers after about 5 s:
	// wait until every replica was scraped once.
	deadline := time.Now().Add(30 * time.Second)
	for {
		up, err := promQuery(ctx, addr, "count(up == 1)")
		if err == nil && len(up) == 1 && up[0].Value[1] == fmt.Sprint(len(reps)) {
			return addr, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("prometheus did not scrape the %d replicas in 30 s (%v)", len(reps), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
