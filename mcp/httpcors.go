package mcp

import "net/http"

// corsRequestHeaders are the request headers a browser page of an allowed
// origin may send: the MCP transport's own, the bearer token of serve's
// /mcp, and the JSON content type, which needs a preflight.
const corsRequestHeaders = "Authorization, Content-Type, Last-Event-ID, Mcp-Method, Mcp-Name, Mcp-Protocol-Version, Mcp-Session-Id"

// allowCORS lets a page of an allowed origin (HTTPOptions.AllowedOrigins;
// the request's Origin header, already checked by refusedOrigin) read
// the answer and the session id. A request without an Origin header, or
// with one refused, gets no CORS header: the browser then keeps the
// answer from the page.
func allowCORS(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id")
	h.Add("Vary", "Origin")
}

// preflight answers a CORS preflight (OPTIONS) of an allowed origin: the
// methods and headers the transport takes, for ten minutes.
func preflight(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST, DELETE")
	h.Set("Access-Control-Allow-Headers", corsRequestHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
}
