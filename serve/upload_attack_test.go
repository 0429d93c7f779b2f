package serve

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowUploadsOfOneTenant: a tenant that opens as many uploads as the
// server reads at once and sends their bodies slowly (up to the server's
// read timeout, two minutes, again and again) must not stall another
// tenant's requests. Without the per-tenant share the other tenant's
// POST waits for as long as the slow bodies last.
func TestSlowUploadsOfOneTenant(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxRuns = 2 })
	addr := strings.TrimPrefix(f.ts.URL, "http://")
	places := cap(f.srv.uploads)
	for range places {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/executions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", tokenA)
	}
	// Let the slow requests reach the server and take what they can.
	for deadline := time.Now().Add(2 * time.Second); len(f.srv.uploads) < places && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// An empty request is refused (400) once its body is read: it needs
	// an upload place, and no sandbox.
	req, err := http.NewRequestWithContext(ctx, "POST", f.ts.URL+"/v1/executions", bytes.NewReader([]byte(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tokenB)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("team-b's request, with team-a holding %d of %d upload places: %v", len(f.srv.uploads), places, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("team-b: status %d, want 400", resp.StatusCode)
	}
}

func TestTenantUploads(t *testing.T) {
	for _, c := range []struct{ places, tenants, want int }{
		{2, 1, 2}, {2, 2, 1}, {4, 2, 2}, {4, 9, 2}, {5, 3, 2}, {64, 1, 64},
	} {
		if got := tenantUploads(c.places, c.tenants); got != c.want {
			t.Errorf("tenantUploads(%d, %d) = %d, want %d", c.places, c.tenants, got, c.want)
		}
	}
}
