package netproxy

import "testing"

func TestCovers(t *testing.T) {
	tests := []struct {
		grant, req string
		want       bool
	}{
		{"api.example.com", "api.example.com", true},
		{"api.example.com", "API.example.com.", true},
		{"api.example.com", "api.example.com:443", true},
		{"api.example.com", "api.example.com:8443", false},
		{"api.example.com:443", "api.example.com:443", true},
		{"api.example.com:443", "api.example.com", false},
		{"api.example.com:443", "api.example.com:80", false},
		{"api.example.com", "example.com", false},
		{"api.example.com", "*.api.example.com", false},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "a.b.example.com:80", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "badexample.com", false},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "*.api.example.com", true},
		{"*.api.example.com", "*.example.com", false},
		{"*.example.com:443", "*.example.com", false},
		{"203.0.113.7", "203.0.113.7:443", true},
		{"203.0.113.7", "203.0.113.8", false},
		{"*.example.com", "203.0.113.7", false},
		{"203.0.113.7", "example.com", false},
	}
	for _, tt := range tests {
		g, err1 := ParsePattern(tt.grant)
		r, err2 := ParsePattern(tt.req)
		if err1 != nil || err2 != nil {
			t.Fatalf("ParsePattern: %v, %v", err1, err2)
		}
		if got := g.Covers(r); got != tt.want {
			t.Errorf("%q covers %q = %v, want %v", tt.grant, tt.req, got, tt.want)
		}
	}
}

func TestDenies(t *testing.T) {
	tests := []struct {
		deny, req string
		want      bool
	}{
		{"api.example.com", "api.example.com", true},
		{"api.example.com", "api.example.com:8443", true}, // no port: every port
		{"api.example.com:8443", "api.example.com:8443", true},
		{"api.example.com:8443", "api.example.com", false},
		{"api.example.com:8443", "api.example.com:443", false},
		{"*.example.com", "a.example.com:22", true},
		{"*.example.com", "*.example.com:8080", true},
		{"*.example.com", "example.com:8080", false},
		{"203.0.113.7", "203.0.113.7:8080", true},
		{"api.example.com", "*.example.com", false},
	}
	for _, tt := range tests {
		d, err1 := ParsePattern(tt.deny)
		r, err2 := ParsePattern(tt.req)
		if err1 != nil || err2 != nil {
			t.Fatalf("ParsePattern: %v, %v", err1, err2)
		}
		if got := d.Denies(r); got != tt.want {
			t.Errorf("%q denies %q = %v, want %v", tt.deny, tt.req, got, tt.want)
		}
	}
}
