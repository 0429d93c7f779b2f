package serve_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/serve"
)

// Serve the tenants of a tokens file until SIGTERM, then drain: every
// accepted run finishes (or is stopped after a minute) with its record.
// A program that runs sandboxes calls run.ExecInitIfRequested first.
func Example() {
	run.ExecInitIfRequested()
	tokens, err := serve.LoadTokens("/etc/skill-sandbox/tokens.json")
	if err != nil {
		log.Fatal(err)
	}
	work, err := os.MkdirTemp("", "serve-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	srv, err := serve.New(serve.Config{Tokens: tokens, WorkDir: work, Log: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	hs := srv.HTTPServer()
	hs.Addr = "127.0.0.1:8080"
	go func() {
		if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	go hs.Shutdown(ctx)
	if err := srv.Drain(ctx); err != nil {
		log.Print("runs were stopped at the drain timeout; each has its record")
	}
}
