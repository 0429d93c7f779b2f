package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// downloadBytes is the size of the large download of measureDownload.
const downloadBytes = 100 << 20

// smallRequests is how many small requests each round makes.
const smallRequests = 40

// downloadScript fetches $1 once, then $2 $3 times, each on a new
// connection, and prints curl's time_total of each, in seconds, one a line.
const downloadScript = `#!/bin/sh
set -e
curl -sS -o /dev/null -w '%{time_total}\n' "$1"
i=0
while [ "$i" -lt "$3" ]; do
	curl -sS -o /dev/null -H 'Connection: close' -w '%{time_total}\n' "$2"
	i=$((i + 1))
done
`

// downloadPaths are the ways measureDownload reaches the servers: curl on
// the host (bare), curl in the sandbox with the host's network
// (--allow-network) and through the filtering proxy (--allow-host).
var downloadPaths = []string{"bare", "--allow-network", "--allow-host"}

// downloads holds, per path, the time of each large download and of each
// small request.
type downloads struct {
	large, small map[string][]time.Duration
	err          error
}

// measureDownload times, in rounds interleaving the three paths, a
// download of downloadBytes over plain HTTP from a server on the host's
// loopback and smallRequests requests of a 100-byte answer, each on a new
// connection (issue 32: through the proxy at least 70 % of bare
// throughput, at most 0.2 ms added per request).
func measureDownload(o options, base string, rounds int) downloads {
	r := downloads{large: map[string][]time.Duration{}, small: map[string][]time.Duration{}}
	curl, err := lookSystem("curl")
	if err != nil {
		r.err = err
		return r
	}
	large, err := blobServer(downloadBytes)
	if err != nil {
		r.err = err
		return r
	}
	defer large.Close()
	small, err := blobServer(100)
	if err != nil {
		r.err = err
		return r
	}
	defer small.Close()
	k := kind{label: "download", skill: "bench-download", script: "get.sh", body: downloadScript}
	if err := makeSkill(base, k); err != nil {
		r.err = err
		return r
	}
	skill := filepath.Join(base, k.skill)
	urls := []string{"http://" + large.Addr().String() + "/blob", "http://" + small.Addr().String() + "/small", strconv.Itoa(smallRequests)}
	for i := 0; i < rounds+1; i++ {
		for _, p := range downloadPaths {
			var cmd *exec.Cmd
			switch p {
			case "bare":
				cmd = exec.Command("sh", append([]string{filepath.Join(skill, "scripts", k.script)}, urls...)...)
				cmd.Env = []string{"PATH=" + filepath.Dir(curl) + ":" + systemPath, "LANG=C.UTF-8"}
			case "--allow-network":
				cmd = exec.Command(o.bin, append([]string{"run", "--allow-network", skill, k.script}, urls...)...)
			default:
				cmd = exec.Command(o.bin, append([]string{"run", "--allow-host", large.Addr().String(), "--allow-host", small.Addr().String(), skill, k.script}, urls...)...)
			}
			times, err := curlTimes(cmd)
			if err != nil {
				r.err = fmt.Errorf("%s: %w", p, err)
				return r
			}
			if len(times) != 1+smallRequests {
				r.err = fmt.Errorf("%s: %d times printed, want %d", p, len(times), 1+smallRequests)
				return r
			}
			if i == 0 { // the first round warms the caches
				continue
			}
			r.large[p] = append(r.large[p], times[0])
			r.small[p] = append(r.small[p], times[1:]...)
		}
	}
	return r
}

// curlTimes runs cmd and parses the times it prints, in seconds, one a
// line.
func curlTimes(cmd *exec.Cmd) ([]time.Duration, error) {
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %w: %s", cmd.Args, err, strings.TrimSpace(errBuf.String()))
	}
	var ts []time.Duration
	for _, f := range strings.Fields(string(out)) {
		secs, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, fmt.Errorf("curl printed %q: %s", out, strings.TrimSpace(errBuf.String()))
		}
		ts = append(ts, time.Duration(secs*float64(time.Second)))
	}
	return ts, nil
}

// blobServer serves, on 127.0.0.1, size bytes to every connection after
// its request head, then closes it: a file server without net/http's
// own costs, the same for every path measured.
func blobServer(size int) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	blob := make([]byte, min(size, 1<<20))
	for i := range blob {
		blob[i] = byte(i % 251)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveBlob(c, blob, size)
		}
	}()
	return ln, nil
}

// serveBlob reads a request head from c and answers it with size bytes.
func serveBlob(c net.Conn, blob []byte, size int) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if line == "\r\n" {
			break
		}
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", size)
	for left := size; left > 0; {
		n, err := c.Write(blob[:min(left, len(blob))])
		if err != nil {
			return
		}
		left -= n
	}
}

// printDownload prints the download table.
func printDownload(w io.Writer, r downloads) {
	fmt.Fprintln(w)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(w, "Plain HTTP from 127.0.0.1, curl; load average %s\n\n", strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintln(w, "| path | 100 MB download, median | MB/s | of bare | small request (time_total), median | added to bare | added to --allow-network |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	if r.err != nil {
		fmt.Fprintf(w, "| failed: %v | | | | | | |\n", r.err)
		return
	}
	bareL, bareS := quantile(r.large["bare"], 0.5), quantile(r.small["bare"], 0.5)
	hostS := quantile(r.small["--allow-network"], 0.5)
	for _, p := range downloadPaths {
		l, s := quantile(r.large[p], 0.5), quantile(r.small[p], 0.5)
		mbps := downloadBytes / l.Seconds() / 1e6
		fmt.Fprintf(w, "| %s (%d, %d) | %s | %.0f | %.2f | %.3f ms | %+.3f ms | %+.3f ms |\n", p, len(r.large[p]), len(r.small[p]),
			ms(l), mbps, bareL.Seconds()/l.Seconds(), float64(s.Microseconds())/1000,
			float64((s-bareS).Microseconds())/1000, float64((s-hostS).Microseconds())/1000)
	}
}
