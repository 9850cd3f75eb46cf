"""A refresh against a server that accepts and never answers gives up at its deadline, and
a refused connection fails at once (no silent retries), each with one error line."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from planner.cli.main import app

runner = CliRunner()


@pytest.fixture()
def silent_port() -> Iterator[int]:
    """A socket server on 127.0.0.1 that accepts every connection and never sends a byte."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(timeout=2)
    for conn in held:
        conn.close()
    server.close()


def _refresh(source: str, port: int, *flags: str) -> tuple[int, str, float]:
    started = time.monotonic()
    done = runner.invoke(
        app,
        ["pricing", "refresh", source, "--base-url", f"http://127.0.0.1:{port}", *flags],
        env={"COLUMNS": "100"},
    )
    return done.exit_code, done.stderr, time.monotonic() - started


@pytest.mark.parametrize("source", ["azure", "aws-public"])
def test_a_server_that_never_answers_is_given_up_at_the_deadline(
    silent_port: int, source: str
) -> None:
    code, stderr, took_s = _refresh(source, silent_port, "--deadline", "1", "--timeout", "60")
    assert code == 1
    assert took_s < 4, f"{source} took {took_s:.1f} s against a 1 s deadline"
    assert stderr.count("error:") == 1 and "did not finish within 1 s" in " ".join(stderr.split())
    assert "stays in use, unchanged" in " ".join(stderr.split())


def test_a_refused_connection_fails_at_once_without_retries() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed below: nothing listens there
    code, stderr, took_s = _refresh("azure", port, "--attempts", "5")
    assert code == 1 and took_s < 3, f"took {took_s:.1f} s (five tries with backoff took 14 s)"
    text = " ".join(stderr.split())
    assert stderr.count("error:") == 1 and "Connection refused" in text
    assert "still failing after" not in text
