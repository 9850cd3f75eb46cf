"""The conftest guard itself: outbound connections fail, loopback works."""

import socket

import pytest

from tests.conftest import OutboundConnectionBlocked


def test_metadata_address_is_unreachable() -> None:
    with socket.socket() as sock, pytest.raises(OutboundConnectionBlocked, match=r"169\.254"):
        sock.connect(("169.254.169.254", 80))


def test_public_address_is_unreachable() -> None:
    with socket.socket() as sock, pytest.raises(OutboundConnectionBlocked):
        sock.connect_ex(("8.8.8.8", 443))


def test_loopback_still_works() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    with socket.socket() as client:
        client.connect(("127.0.0.1", port))
        conn, _ = server.accept()
        conn.close()
    server.close()
