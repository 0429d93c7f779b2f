package netproxy

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strings"
	"testing"
)

// reflectingServer routes api.example.com of f to an HTTPS server that
// reflects the request as common servers do: Origin into
// Access-Control-Allow-Origin (CORS middleware), X-Request-Id back, an
// early-hints 103 with a Link quoting the query, and the Origin in the
// body too.
func reflectingServer(t *testing.T, f *secretFixture) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</style.css?"+r.URL.RawQuery+">; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
		}
		if o := r.Header.Get("Origin"); o != "" {
			w.Header().Set("Access-Control-Allow-Origin", o)
		}
		if id := r.Header.Get("X-Request-Id"); id != "" {
			w.Header().Set("X-Request-Id", id)
		}
		fmt.Fprintf(w, "origin=%s", r.Header.Get("Origin"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert(t, f.ca, "api.example.com")}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f.net.routes["203.0.113.10:443"] = srv.Listener.Addr().String()
}

// TestSecretReflectedHeader: with any-header, a server that reflects a
// request header into its response head does not hand the script the
// value the proxy put in that header: the response head comes back with
// the placeholder. The body passes unchanged (the documented limit that
// any-header opts into), framing intact.
func TestSecretReflectedHeader(t *testing.T) {
	f := newSecretFixture(t, "TOKEN@api.example.com,any-header", "KEY@api.example.com,url")
	reflectingServer(t, f)
	tok, key := f.secrets.Env()["TOKEN"], f.secrets.Env()["KEY"]
	for _, h := range []string{"Origin", "X-Request-Id"} {
		req, _ := http.NewRequest("GET", "https://api.example.com/hints?k="+key, nil)
		req.Header.Set(h, tok)
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if v := resp.Header.Get(h); h == "X-Request-Id" && v != tok {
			t.Errorf("%s came back as %q, want the placeholder", h, v)
		}
		for k, v := range resp.Header {
			if strings.Contains(strings.Join(v, " "), testSecretValue) {
				t.Errorf("%s: the value came back in %s", h, k)
			}
		}
		if h == "Origin" && string(b) != "origin="+testSecretValue {
			t.Errorf("body %q, want it unchanged", b)
		}
	}
	// The 103 before the answer quoted the query, where KEY's value was.
	var link string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		link += fmt.Sprint(code, h.Get("Link"))
		return nil
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", "https://api.example.com/hints?k="+key, nil)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !strings.HasPrefix(link, "103") || strings.Contains(link, testSecretValue) || !strings.Contains(link, placeholderPrefix) {
		t.Errorf("103 Link %q", link)
	}
}

// TestSecretReflectedTarget: with ,url, Go's ServeMux answers a path it
// cleans with a redirect that keeps the query and the path: Location
// comes back with the placeholder.
func TestSecretReflectedTarget(t *testing.T) {
	f := newSecretFixture(t)
	key := f.secrets.Env()["KEY"]
	for _, u := range []string{"https://api.example.com//x?k=" + key, "https://api.example.com/a/..//" + key} {
		resp, err := f.client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// TOKEN has the same value: either placeholder may come back.
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 != 3 || strings.Contains(loc, testSecretValue) || !strings.Contains(loc, placeholderPrefix) {
			t.Errorf("%s: %d, Location %q", u, resp.StatusCode, loc)
		}
	}
}

// TestSecretScrubShortValue: a one-byte value leaves the status, header
// names and Content-Length alone, so that the response still parses.
func TestSecretScrubShortValue(t *testing.T) {
	f := newSecretFixture(t, "TOKEN@api.example.com,any-header")
	f.secrets.list[0].Value = "1"
	reflectingServer(t, f)
	req, _ := http.NewRequest("GET", "https://api.example.com/", nil)
	req.Header.Set("Origin", f.secrets.Env()["TOKEN"])
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "origin=1" || resp.Header.Get("Access-Control-Allow-Origin") != f.secrets.Env()["TOKEN"] {
		t.Errorf("%d %q %v", resp.StatusCode, b, resp.Header)
	}
}

// echoHeadersServer routes api.example.com of f to an HTTPS server whose
// body quotes the request's headers h and its body, as debug and echo
// endpoints do.
func echoHeadersServer(t *testing.T, f *secretFixture, h ...string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		for _, name := range h {
			fmt.Fprintf(w, "%s=%s;", name, r.Header.Get(name))
		}
		fmt.Fprintf(w, "body=%s", b)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert(t, f.ca, "api.example.com")}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f.net.routes["203.0.113.10:443"] = srv.Listener.Addr().String()
}

// TestSecretCredentialHeadersOnly: by default the placeholder is replaced
// in the credential headers alone: a server that echoes the request's
// other headers and its body (the reflection the response scrubbing
// cannot catch) hands back only placeholders for them. header=NAME adds
// a header, any-header takes them all; the body is never rewritten.
func TestSecretCredentialHeadersOnly(t *testing.T) {
	names := []string{"Authorization", "X-Api-Key", "Private-Token", "Origin", "X-Request-Id", "X-Custom"}
	for _, tt := range []struct {
		spec     string
		injected []string // headers that get the value
	}{
		{"TOKEN@api.example.com", []string{"Authorization", "X-Api-Key", "Private-Token"}},
		{"TOKEN@api.example.com,header=X-Custom", []string{"Authorization", "X-Api-Key", "Private-Token", "X-Custom"}},
		{"TOKEN@api.example.com,any-header", names},
	} {
		f := newSecretFixture(t, tt.spec)
		echoHeadersServer(t, f, names...)
		tok := f.secrets.Env()["TOKEN"]
		req, _ := http.NewRequest("POST", "https://api.example.com/echo", strings.NewReader("token="+tok))
		for _, h := range names {
			req.Header.Set(h, tok)
		}
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(b)
		for _, h := range names {
			want := h + "=" + tok + ";"
			if slices.Contains(tt.injected, h) {
				want = h + "=" + testSecretValue + ";"
			}
			if !strings.Contains(got, want) {
				t.Errorf("%s: the server got %s as %q, want %q", tt.spec, h, got, want)
			}
		}
		if !strings.HasSuffix(got, "body=token="+tok) {
			t.Errorf("%s: the body was rewritten: %q", tt.spec, got)
		}
	}
}

// TestSecretReflectedBasicCredentials: a server that reflects the
// request's Authorization into a response header (a debug or echo
// middleware) sends back the Basic credentials the proxy encoded with
// the value in them: base64, which the scrubbing of the value's plain
// forms missed and which the script decodes. They come back as the
// script sent them, placeholder inside, at every offset of the value in
// the credentials (each shifts the base64 differently), with or
// without their padding.
func TestSecretReflectedBasicCredentials(t *testing.T) {
	f := newSecretFixture(t, "TOKEN@api.example.com")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := r.Header.Get("Authorization")
		w.Header().Set("X-Echo-Authorization", a)
		_, cred, _ := strings.Cut(a, " ")
		w.Header().Set("X-Echo-Credentials", "["+cred+"]")
		w.Header().Set("X-Echo-Unpadded", strings.TrimRight(cred, "="))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert(t, f.ca, "api.example.com")}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	f.net.routes["203.0.113.10:443"] = srv.Listener.Addr().String()
	tok := f.secrets.Env()["TOKEN"]
	for _, user := range []string{"x", "xy", "xyz"} {
		sent := base64.StdEncoding.EncodeToString([]byte(user + ":" + tok))
		req, _ := http.NewRequest("GET", "https://api.example.com/", nil)
		req.Header.Set("Authorization", "Basic "+sent)
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Echo-Authorization"); got != "Basic "+sent {
			t.Errorf("user %s: Authorization reflected as %q, want the credentials as sent, %q", user, got, "Basic "+sent)
		}
		if got := resp.Header.Get("X-Echo-Credentials"); got != "["+sent+"]" {
			t.Errorf("user %s: credentials reflected as %q, want %q", user, got, "["+sent+"]")
		}
		// Either padding may come back: the credentials with the value
		// may need none where those with the placeholder need some.
		if got, want := strings.TrimRight(resp.Header.Get("X-Echo-Unpadded"), "="), strings.TrimRight(sent, "="); got != want {
			t.Errorf("user %s: credentials without padding reflected as %q, want %q", user, got, want)
		}
	}
}
