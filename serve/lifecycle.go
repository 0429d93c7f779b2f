package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net/http"
	"slices"
	"time"
)

// Drain stops taking new executions and waits for every accepted one to
// end with its record. At ctx's end the runs still in progress or queued
// are stopped (their context canceled) and Drain waits for their records
// before it returns ctx's error. It also ends the MCP sessions (stopping
// their runs, each recorded) and closes the pool.
func (s *Server) Drain(ctx context.Context) error {
	s.mu.Lock()
	first := !s.draining
	s.draining = true
	s.mu.Unlock()
	if first {
		close(s.stop)
	}
	done := make(chan struct{})
	go func() {
		s.runs.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		s.log().Warn("drain timeout: stopping the runs in progress", "in_flight", s.queue.running(), "queued", s.queue.waiting())
		s.cancelRun()
		<-done
	}
	s.cancelRun()
	// The MCP sessions end here: their runs in progress are stopped and
	// recorded.
	s.closeMCP()
	if s.pool != nil {
		s.pool.Close()
		if st := s.pool.GVisorStats(); st.Started+st.Missed > 0 {
			s.log().Info("pre-started gVisor sandboxes", "started", st.Started, "used", st.Taken,
				"unpooled", st.Missed, "expired", st.Expired, "died", st.Died)
		}
	}
	s.FlushRecords()
	return err
}

// Close stops every run at once and waits for their records.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Drain(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// isDraining reports whether Drain was called.
func (s *Server) isDraining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.draining
}

// Tenants returns the names of the tenants, sorted.
func (s *Server) Tenants() []string {
	names := make([]string, 0, len(s.tenants))
	for n := range s.tenants {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// tlsSuites are the TLS 1.2 cipher suites served: ECDHE with an AEAD
// (Mozilla's "intermediate" list). Go's defaults also take the CBC suites
// with SHA-1 MACs, which no current client needs. TLS 1.3's suites are
// not configurable and all good.
func tlsSuites() []uint16 {
	return []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	}
}

// HTTPServer returns an HTTP server for Handler: HTTP/1.1 and HTTP/2
// (with TLS, or cleartext with prior knowledge), and timeouts that keep a
// slow client from holding a connection: the headers within
// Config.ReadHeaderTimeout (slowloris), the body within 2 minutes, 64 KiB
// of headers at most; TLS 1.2 (ECDHE with an AEAD only) or 1.3. Answers are not bounded in time: ?wait=true holds
// one for as long as its run.
func (s *Server) HTTPServer() *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		Protocols:         &protocols,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: tlsSuites()},
		ErrorLog:          log.New(limitedWriter{log: s.log(), lim: s.noisy}, "", 0),
	}
}
