"""A Compute Engine REST stand-in on 127.0.0.1: the subset a sweep uses.

instances insert/get/delete/list (label filters `labels.K = "V"` and `labels.K:*`, the
only forms it understands: anything else is a 400), aggregated list, and zone
operations get/wait. Inserted instances boot on successive gets (PROVISIONING ->
STAGING -> RUNNING, then with an external address `nat_ip`); operations are RUNNING
when returned and DONE once waited on or read. Every request is recorded with its body.
`fail(Fault(...))` makes the next matching request answer an HTTP error, an operation
that finishes with an error (as capacity errors arrive on real GCE), or (code "STUCK")
an operation that never finishes.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import urllib.parse
from dataclasses import dataclass
from typing import Any

from tests.loopback import LoopbackServer, QuietHandler

BASE = "/compute/v1/projects/"
INSTANCES = re.compile(r"^/compute/v1/projects/([^/]+)/zones/([^/]+)/instances(?:/([^/]+))?$")
AGGREGATED = re.compile(r"^/compute/v1/projects/([^/]+)/aggregated/instances$")
OPERATION = re.compile(r"^/compute/v1/projects/([^/]+)/zones/([^/]+)/operations/([^/]+?)(/wait)?$")
LABEL_EQUALS = re.compile(r'^labels\.([a-z0-9_-]+)\s*=\s*"([^"]*)"$')
LABEL_EXISTS = re.compile(r"^labels\.([a-z0-9_-]+):\*$")
BOOT_STEPS = ("PROVISIONING", "STAGING", "RUNNING")


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class Fault:
    method: str
    path_part: str
    status: int = 0  # an HTTP error status, or 0: an operation finishing with `code`
    code: str = ""
    message: str = ""
    reason: str = ""


class FakeGce(LoopbackServer):
    """The stand-in; `url` is its api_endpoint. Use as a context manager or close()."""

    def __init__(self, nat_ip: str = "127.0.0.1") -> None:
        self.nat_ip = nat_ip
        self.instances: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.operations: dict[str, dict[str, Any]] = {}
        self.requests: list[Recorded] = []
        self.faults: list[Fault] = []
        self.stuck: set[str] = set()  # operations that never finish
        self.lock = threading.Lock()
        self.ids = itertools.count(1000)
        fake = self

        class Handler(QuietHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parsed = urllib.parse.urlsplit(self.path)
                body = json.loads(raw) if raw else None
                query = urllib.parse.parse_qs(parsed.query)
                with fake.lock:
                    fake.requests.append(Recorded(self.command, parsed.path, query, body))
                    status, reply = fake.answer(self.command, parsed.path, query, body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _handle

        super().__init__(Handler)

    # -- test controls

    def fail(self, fault: Fault) -> None:
        with self.lock:
            self.faults.append(fault)

    def inserted(self) -> list[dict[str, Any]]:
        """The instance bodies the client sent with instances.insert, in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST" and INSTANCES.match(r.path) and r.body is not None
        ]

    def live(self) -> list[dict[str, Any]]:
        """Every instance that still exists and is not TERMINATED."""
        with self.lock:
            return [i for i in self.instances.values() if i["status"] != "TERMINATED"]

    def put(self, project: str, zone: str, name: str, labels: dict[str, str], status: str) -> None:
        """An instance created behind the client's back (another tool, the console)."""
        with self.lock:
            self.instances[(project, zone, name)] = self._instance(
                project, zone, {"name": name, "labels": labels}, status
            )

    def __enter__(self) -> FakeGce:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the API

    def answer(
        self, method: str, path: str, query: dict[str, list[str]], body: Any
    ) -> tuple[int, Any]:
        fault = next((f for f in self.faults if f.method == method and f.path_part in path), None)
        if fault and fault.status:
            self.faults.remove(fault)
            return fault.status, _error(fault.status, fault.message, fault.reason or "error")
        if match := OPERATION.match(path):
            operation = self.operations.get(match.group(3))
            if operation is None:
                return 404, _error(404, f"operation {match.group(3)} not found", "notFound")
            if match.group(3) not in self.stuck:
                operation["status"] = "DONE"
            return 200, operation
        if match := AGGREGATED.match(path):
            chosen = self._select(match.group(1), None, query)
            if isinstance(chosen, tuple):
                return chosen
            items: dict[str, Any] = {}
            for instance in chosen:
                zone = instance["zone"].rsplit("/", 1)[-1]
                items.setdefault(f"zones/{zone}", {"instances": []})["instances"].append(instance)
            return 200, {"kind": "compute#instanceAggregatedList", "items": items}
        match = INSTANCES.match(path)
        if not match:
            return 404, _error(404, f"no route {method} {path}", "notFound")
        project, zone, name = match.groups()
        key = (project, zone, name or "")
        if method == "POST" and name is None:
            name = str(body["name"])
            if (project, zone, name) in self.instances:
                return 409, _error(409, f"The resource '{name}' already exists", "alreadyExists")
            self.instances[(project, zone, name)] = self._instance(
                project, zone, body, "PROVISIONING"
            )
            return 200, self._operation(project, zone, "insert", name, fault)
        if method == "GET" and name is None:
            chosen = self._select(project, zone, query)
            if isinstance(chosen, tuple):
                return chosen
            return 200, {"kind": "compute#instanceList", "items": chosen}
        instance = self.instances.get(key)
        if instance is None:
            message = (
                f"The resource 'projects/{project}/zones/{zone}/instances/{name}' was not found"
            )
            return 404, _error(404, message, "notFound")
        if method == "GET":
            self._boot_step(instance)
            return 200, instance
        if method == "DELETE":
            del self.instances[key]
            return 200, self._operation(project, zone, "delete", name or "", fault)
        return 405, _error(405, method, "badRequest")

    # -- helpers

    def _instance(
        self, project: str, zone: str, body: dict[str, Any], status: str
    ) -> dict[str, Any]:
        instance = dict(body)
        instance.update(
            kind="compute#instance",
            id=str(next(self.ids)),
            status=status,
            zone=f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}",
            creationTimestamp="2026-11-30T23:00:00.000-08:00",
        )
        interfaces = instance.get("networkInterfaces") or [{"accessConfigs": [{}]}]
        for interface in interfaces:
            interface["networkIP"] = "10.128.0.2"
        instance["networkInterfaces"] = interfaces
        if status == "RUNNING":
            self._boot_step(instance)
        return instance

    def _boot_step(self, instance: dict[str, Any]) -> None:
        if instance["status"] in BOOT_STEPS[:-1]:
            instance["status"] = BOOT_STEPS[BOOT_STEPS.index(instance["status"]) + 1]
        if instance["status"] == "RUNNING":
            for interface in instance["networkInterfaces"]:
                for access in interface.get("accessConfigs", []):
                    access["natIP"] = self.nat_ip

    def _operation(
        self, project: str, zone: str, kind: str, name: str, fault: Fault | None
    ) -> dict[str, Any]:
        op_name = f"operation-{next(self.ids)}-{kind}"
        operation: dict[str, Any] = {
            "kind": "compute#operation",
            "id": str(next(self.ids)),
            "name": op_name,
            "zone": f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}",
            "operationType": kind,
            "targetLink": f"projects/{project}/zones/{zone}/instances/{name}",
            "status": "RUNNING",
        }
        if fault is not None and fault.code == "STUCK":
            self.faults.remove(fault)
            self.stuck.add(op_name)
        elif fault is not None and not fault.status:
            self.faults.remove(fault)
            operation["error"] = {"errors": [{"code": fault.code, "message": fault.message}]}
            operation["httpErrorStatusCode"] = 503
            self.instances.pop((project, zone, name), None)  # the insert did not happen
        self.operations[op_name] = operation
        return dict(operation)

    def _select(
        self, project: str, zone: str | None, query: dict[str, list[str]]
    ) -> list[dict[str, Any]] | tuple[int, Any]:
        flt = query.get("filter", [""])[0].strip()
        equals, exists = LABEL_EQUALS.match(flt), LABEL_EXISTS.match(flt)
        if flt and not (equals or exists):
            return 400, _error(400, f"Invalid value for field 'filter': '{flt}'", "invalid")
        chosen = []
        for (p, z, _), instance in self.instances.items():
            labels = instance.get("labels") or {}
            if p != project or (zone is not None and z != zone):
                continue
            if equals and labels.get(equals.group(1)) != equals.group(2):
                continue
            if exists and exists.group(1) not in labels:
                continue
            chosen.append(instance)
        return chosen


def _error(status: int, message: str, reason: str) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
        }
    }
