"""A failed `pricing refresh skypilot --clouds X` names only the providers asked for,
one line each (not every cloud SkyPilot covers on one line)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pricing.providers.retry import RetryPolicy
from pricing.refresh import RefreshError, refresh
from tests.loopback import LoopbackServer, QuietHandler


class NotFound(QuietHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture()
def server() -> Iterator[LoopbackServer]:
    running = LoopbackServer(NotFound)
    yield running
    running.close()


@pytest.mark.parametrize("clouds", [["lambda"], ["lambda", "nebius"]])
def test_a_failed_skypilot_refresh_has_one_line_per_cloud_asked(
    server: LoopbackServer, clouds: list[str]
) -> None:
    retry = RetryPolicy(attempts=1, timeout_s=5, deadline_s=10, sleep=lambda _: None)
    options = {"base_url": server.url, "commits": server.url, "clouds": clouds}
    with pytest.raises(RefreshError) as info:
        refresh("skypilot", options=options, retry=retry)
    first, *kept = str(info.value).splitlines()
    assert first.startswith("skypilot refresh failed: ")
    assert len(kept) == len(clouds)
    for line, cloud in zip(kept, clouds, strict=True):
        assert f" {cloud} snapshot" in line and line.endswith("stays in use, unchanged.")
    assert not any(" aws snapshot" in line or " gcp snapshot" in line for line in kept)
    assert all(len(line) < 300 for line in (first, *kept))
