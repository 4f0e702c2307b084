"""`triage site serve`: the built site over HTTP on 127.0.0.1 only (never another interface)."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Quiet: only failed requests are worth a line."""
        if isinstance(code, int) and code >= 400:
            super().log_request(code, size)


def make_server(directory: Path, port: int) -> ThreadingHTTPServer:
    """A server for `directory` bound to 127.0.0.1:`port` (0 picks a free port)."""
    handler = functools.partial(_Handler, directory=str(directory))
    return ThreadingHTTPServer((HOST, port), handler)


def url_of(server: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_address[1]}/"
