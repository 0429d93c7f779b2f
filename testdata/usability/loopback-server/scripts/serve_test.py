#!/usr/bin/env python3
"""Serve a page on 127.0.0.1 (an ephemeral port) and fetch it back, by
address and by the name localhost (as webapp tests wait for their server)."""
import http.server
import threading
import urllib.request

PAGE = b"<html><body>hello from the local server</body></html>"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]
body = urllib.request.urlopen("http://127.0.0.1:%d/" % port, timeout=10).read()
by_name = urllib.request.urlopen("http://localhost:%d/" % port, timeout=10).read()
srv.shutdown()
assert body == PAGE, body
assert by_name == PAGE, by_name
print("USABILITY-OK served and fetched %d bytes on 127.0.0.1 and localhost" % len(body))
