"""Stand-ins for the providers' price APIs, on 127.0.0.1, and the fixtures they serve.

- StandIn: a threaded http.server that answers from a route function and can be told to
  misbehave first (HTTP 429 or 500, a page of broken JSON, a page that never comes).
- azure_api / gcp_api: StandIns speaking the Azure Retail Prices and the Cloud Billing +
  Compute REST APIs from the recorded pages in fixtures/, paginated as the real ones.
- moto_ec2: moto's server (the standard AWS stand-in) for EC2 describe_instance_types.
"""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pricing.providers.retry import RetryPolicy
from tests.loopback import LoopbackServer, QuietHandler

FIXTURES = Path(__file__).parent / "fixtures"

Reply = tuple[int, dict[str, str], bytes]


def fixture_json(name: str) -> Any:
    """A recorded API page from tests/pricing/fixtures."""
    return json.loads((FIXTURES / name).read_text())


def tree_bytes(directory: Path) -> dict[str, str]:
    """Every file under `directory` (relative name -> SHA-256), to prove nothing changed."""
    if not directory.exists():
        return {}
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@dataclass
class Sleeps:
    """A RetryPolicy sleep that records the delays instead of waiting."""

    delays: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def fast_retry(attempts: int = 3, timeout_s: float = 2.0) -> tuple[RetryPolicy, Sleeps]:
    """A retry policy for tests: real backoff arithmetic, recorded (not slept) delays."""
    sleeps = Sleeps()
    policy = RetryPolicy(
        attempts=attempts,
        base_delay_s=0.5,
        max_delay_s=8.0,
        timeout_s=timeout_s,
        jitter=0.0,
        sleep=sleeps,
    )
    return policy, sleeps


class StandIn(LoopbackServer):
    """An HTTP server on 127.0.0.1 answering GETs from `route(path, query) -> reply`.

    `fail(match, action)` queues a misbehaviour for the next request whose path and
    query contain `match`: "429" (with Retry-After), "500", "garbage" (HTTP 200 with a
    body that is not JSON) or "hang" (no answer until the test ends).
    """

    def __init__(self, route: Callable[[str, dict[str, list[str]]], Reply]) -> None:
        self.route = route
        self.faults: list[tuple[str, str]] = []
        self.requests: list[str] = []
        self.released = threading.Event()
        stand_in = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                stand_in.requests.append(self.path)
                status, headers, body = stand_in.answer(self.path, self.command)
                if status == 0:
                    stand_in.released.wait(10)
                    return
                self.send_response(status)
                for key, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

        super().__init__(Handler)

    def fail(self, match: str, action: str, times: int = 1) -> None:
        self.faults += [(match, action)] * times

    def answer(self, path: str, method: str = "GET") -> Reply:
        for i, (match, action) in enumerate(self.faults):
            if match in urllib.parse.unquote(path):
                del self.faults[i]
                error = json.dumps({"error": {"code": 0, "message": action}}).encode()
                if method == "POST":  # AWS query protocol: errors are XML
                    error = (
                        f"<Response><Errors><Error><Code>InternalError</Code><Message>{action}"
                        "</Message></Error></Errors><RequestID>0</RequestID></Response>"
                    ).encode()
                if action == "429":
                    return 429, {"Retry-After": "3"}, error
                if action == "500":
                    return 500, {}, error
                if action == "garbage":
                    return 200, {}, b'{"Items": [{"armSkuName": '
                if action == "hang":
                    return 0, {}, b""
                raise ValueError(action)
        parsed = urllib.parse.urlsplit(path)
        return self.route(parsed.path, urllib.parse.parse_qs(parsed.query))

    def close(self) -> None:
        self.released.set()
        super().close()


def _json(data: Any) -> Reply:
    return 200, {}, json.dumps(data).encode()


@pytest.fixture()
def azure_api() -> Iterator[StandIn]:
    """The Azure Retail Prices API: eastus in two pages (NextPageLink), westeurope in one."""
    pages = {
        "eastus": [
            fixture_json("azure/eastus_page1.json"),
            fixture_json("azure/eastus_page2.json"),
        ],
        "westeurope": [fixture_json("azure/westeurope_page1.json")],
    }

    def route(path: str, query: dict[str, list[str]]) -> Reply:
        if path != "/api/retail/prices":
            return 404, {}, b"{}"
        flt = query.get("$filter", [""])[0]
        region = next((r for r in pages if f"armRegionName eq '{r}'" in flt), None)
        if region is None:
            return _json({"Items": [], "NextPageLink": None, "Count": 0})
        index = int(query.get("$skip", ["0"])[0]) // 100
        page = dict(pages[region][index])
        if page.get("NextPageLink"):
            # Replayed pages link to this server, as the real ones link to the real API.
            link = urllib.parse.urlsplit(page["NextPageLink"])
            page["NextPageLink"] = f"{api.url}{link.path}?{link.query}"
        return _json(page)

    api = StandIn(route)
    yield api
    api.close()


@pytest.fixture()
def gcp_api() -> Iterator[StandIn]:
    """Cloud Billing list_skus and Compute aggregated machine/accelerator types, paginated."""
    skus = [fixture_json("gcp/skus_page1.json"), fixture_json("gcp/skus_page2.json")]
    machines = [
        fixture_json("gcp/machine_types_page1.json"),
        fixture_json("gcp/machine_types_page2.json"),
    ]
    accelerators = [fixture_json("gcp/accelerator_types_page1.json")]

    def paged(pages: list[dict[str, Any]], query: dict[str, list[str]]) -> Reply:
        token = query.get("pageToken", [""])[0]
        index = next(
            (i + 1 for i, p in enumerate(pages) if token and p.get("nextPageToken") == token), 0
        )
        return _json(pages[index])

    def route(path: str, query: dict[str, list[str]]) -> Reply:
        if path == "/v1/services/6F81-5844-456A/skus":
            return paged(skus, query)
        if path == "/compute/v1/projects/gpuplan-test/aggregated/machineTypes":
            return paged(machines, query)
        if path == "/compute/v1/projects/gpuplan-test/aggregated/acceleratorTypes":
            return paged(accelerators, query)
        return 404, {}, json.dumps({"error": {"code": 404, "message": path}}).encode()

    api = StandIn(route)
    yield api
    api.close()


class MisbehavingServer(LoopbackServer):
    """An HTTP/1.1 server on 127.0.0.1 whose `answer(handler)` replies to each GET (the
    paths asked for are kept in `requests`), for servers that misbehave: `stop` is set at
    close() to end their slow or endless answers, and a client that hangs up is no error."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.stop = threading.Event()
        server = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server.requests.append(self.path)
                try:
                    server.answer(self)
                except OSError:  # the client hung up: the point of most misbehaviours
                    return

        super().__init__(Handler)

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.stop.set()
        super().close()


Server = TypeVar("Server", bound=LoopbackServer)


def serving(server: Server) -> Iterator[Server]:
    """`server` for one test, closed after it (the body of a server fixture)."""
    yield server
    server.close()


class FileServer(MisbehavingServer):
    """An HTTP server on 127.0.0.1 serving `files` (path -> bytes or a misbehaviour).

    A misbehaviour is one of "drip" (a large Content-Length, then one byte per second),
    "endless" (a body that never ends, as fast as the client reads), "stall" (headers,
    then nothing) or an int (that HTTP status). `headers` adds response headers.
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes | str | int] = {}
        self.headers: dict[str, str] = {}
        super().__init__()

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path
        self.serve(handler, self.files.get(path, self.files.get(path.split("?")[0], 404)))

    def serve(self, handler: BaseHTTPRequestHandler, body: bytes | str | int) -> None:
        if isinstance(body, int):
            handler.send_response(body)
            handler.send_header("Content-Length", "2")
            handler.end_headers()
            handler.wfile.write(b"{}")
            return
        handler.send_response(200)
        for key, value in self.headers.items():
            handler.send_header(key, value)
        if body == "drip":
            handler.send_header("Content-Length", "100000")
            handler.end_headers()
            while not self.stop.wait(1.0):
                handler.wfile.write(b"x")
                handler.wfile.flush()
        elif body == "endless":
            handler.send_header("Connection", "close")
            handler.end_headers()
            chunk = b"InstanceType,Price\n" + b"x" * 65536
            for _ in range(100_000):  # 6 GB at most, if nothing stopped reading
                if self.stop.is_set():
                    return
                handler.wfile.write(chunk)
        elif body == "stall":
            handler.send_header("Content-Length", "100")
            handler.end_headers()
            self.stop.wait(30)
        else:
            data = body if isinstance(body, bytes) else body.encode()
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)


@pytest.fixture()
def file_server() -> Iterator[FileServer]:
    """A FileServer, closed after the test."""
    yield from serving(FileServer())


@pytest.fixture(scope="session")
def moto_ec2() -> Iterator[str]:
    """moto's server on 127.0.0.1 (EC2 describe_instance_types); its endpoint URL."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


class _Body:
    """The raw body botocore reads an AWSResponse from (its `stream()`)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_kwargs: object) -> Iterator[bytes]:
        yield self.data


class AwsWire:
    """A JSON-protocol AWS API (the Price List API) at botocore's HTTP layer.

    Registered on a real client's `before-send` event, it answers each HTTP request in
    order from a queue of replies (a page, an error, a body that is not JSON), checking
    the request body like botocore's Stubber, but below botocore's retry loop: the SDK's
    retries and backoff run for real, and `requests` counts every try.
    """

    def __init__(self, client: Any, operation: str) -> None:
        self.replies: list[tuple[int, bytes, dict[str, Any] | None]] = []
        self.requests: list[dict[str, Any]] = []
        service = client.meta.service_model.service_id.hyphenize()
        client.meta.events.register(f"before-send.{service}.{operation}", self._send)

    def add_response(self, page: dict[str, Any], expected: dict[str, Any] | None = None) -> None:
        self.replies.append((200, json.dumps(page).encode(), expected))

    def add_client_error(self, code: str, message: str, status: int = 400) -> None:
        body = json.dumps({"__type": code, "message": message}).encode()
        self.replies.append((status, body, None))

    def add_garbage(self) -> None:
        self.replies.append((200, b"<html>not json", None))

    def _send(self, request: Any, **_kwargs: object) -> Any:
        from botocore.awsrequest import AWSResponse

        body = json.loads(request.body or b"{}")
        self.requests.append(body)
        assert self.replies, f"no reply queued for {body}"
        status, data, expected = self.replies.pop(0)
        if expected is not None:
            assert body == expected, body
        headers = {"Content-Type": "application/x-amz-json-1.1"}
        return AWSResponse(request.url, status, headers, _Body(data))

    def assert_no_pending_responses(self) -> None:
        assert not self.replies, f"{len(self.replies)} replies never asked for"

    def __enter__(self) -> AwsWire:
        return self

    def __exit__(self, *_exc: object) -> None:
        return None


@pytest.fixture()
def sdk_sleeps(monkeypatch: pytest.MonkeyPatch) -> Sleeps:
    """The waits botocore's retry loop asks for, recorded instead of slept (only
    botocore.endpoint's `time.sleep` is replaced)."""
    import types

    import botocore.endpoint

    sleeps = Sleeps()
    monkeypatch.setattr(botocore.endpoint, "time", types.SimpleNamespace(sleep=sleeps))
    return sleeps


@pytest.fixture()
def gcp_sleeps(monkeypatch: pytest.MonkeyPatch) -> Sleeps:
    """The waits google-api-core's Retry asks for, recorded instead of slept (only
    google.api_core.retry.retry_unary's `time.sleep` is replaced)."""
    import time
    import types

    from google.api_core.retry import retry_unary

    sleeps = Sleeps()
    clock = types.SimpleNamespace(sleep=sleeps, monotonic=time.monotonic, time=time.time)
    monkeypatch.setattr(retry_unary, "time", clock)
    return sleeps
