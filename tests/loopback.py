"""A threaded HTTP server on 127.0.0.1 for the tests' stand-ins of cloud and price APIs."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the system's pick)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that writes no access log (test output stays readable)."""

    def log_message(self, *args: object) -> None:
        return


class LoopbackServer:
    """`handler` served on 127.0.0.1 at a free port from a daemon thread; `url` is its base.

    The thread polls for shutdown every 0.02 s, so close() returns at once."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
