package mcp_test

import (
	"log"
	"net/http"

	"github.com/skill-sandbox/skill-sandbox/mcp"
)

// A server on a loopback address, its MCP endpoint at /mcp, refusing
// browser pages of other sites and names rebound to 127.0.0.1.
func ExampleServer_HTTPHandler() {
	srv, err := mcp.NewServer(mcp.Config{SkillDirs: []string{"/srv/skills"}, Version: "1.0"})
	if err != nil {
		log.Fatal(err)
	}
	h, err := srv.HTTPHandler(mcp.HTTPOptions{AllowedHosts: []string{"localhost", "127.0.0.1", "::1"}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close() // stops the runs in progress
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	log.Fatal(http.ListenAndServe("127.0.0.1:8931", mux))
}
