"""One JSON state file per sweep, written atomically after every step.

The file is all `status`, `resume` and `cleanup` need after a crash: the spec, the
results folder, each target's state, its machine (cloud ids, region), launch and
terminate times with the price per hour (spend so far), and each run's outcome.

Folder: $GPUPLAN_SWEEP_DIR, else $XDG_DATA_HOME/gpuplan/sweeps (~/.local/share/...).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import re
import secrets
import threading
from pathlib import Path
from typing import Any

from benchmarks.runners.machine import Machine
from edge.files import atomic_write_text

STATE_VERSION = 1
SWEEP_ID = re.compile(r"\A[a-z][a-z0-9-]{0,62}\Z")  # also a valid GCP label value
# Target states; "running" carries "run k of n" in `detail`.
PENDING, PROVISIONING, INSTALLING, RUNNING, COLLECTING = (
    "pending", "provisioning", "installing", "running", "collecting",
)  # fmt: skip
DONE, FAILED, SKIPPED, INTERRUPTED = "done", "failed", "skipped", "interrupted"
STOPPED = "stopped"  # at a limit: max_minutes_per_target, or the sweep's max_usd
FINAL_STATES = (DONE, FAILED, SKIPPED, STOPPED)


def sweeps_dir() -> Path:
    """Where state files live."""
    explicit = os.environ.get("GPUPLAN_SWEEP_DIR")
    if explicit:
        return Path(explicit)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "gpuplan" / "sweeps"


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def iso(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def parse_iso(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_sweep_id(name: str, now: dt.datetime | None = None) -> str:
    """<name>-<YYYYmmddtHHMMSS>-<4 hex>: unique, sortable, a valid tag and label value."""
    stamp = (now or utc_now()).strftime("%Y%m%dt%H%M%S")
    return f"{name}-{stamp}-{secrets.token_hex(2)}"


def check_sweep_id(sweep_id: str) -> str:
    """A sweep id safe to use as a file name, or ValueError."""
    if not SWEEP_ID.match(sweep_id):
        raise ValueError(f"{sweep_id!r} is not a sweep id (see `gpuplan sweep list`)")
    return sweep_id


def state_path(sweep_id: str) -> Path:
    return sweeps_dir() / f"{check_sweep_id(sweep_id)}.json"


def machine_to_dict(machine: Machine | None) -> dict[str, Any] | None:
    return None if machine is None else dataclasses.asdict(machine)


def machine_cloud(data: dict[str, Any] | None) -> str | None:
    """Who launched a recorded machine and so ends it ("aws" | "gcp" | "skypilot"); None for
    ssh, local or none."""
    if not data:
        return None
    backend = data.get("backend")
    return data.get("cloud") or (backend if backend in ("aws", "gcp", "skypilot") else None)


def machine_from_dict(data: dict[str, Any] | None) -> Machine | None:
    if not data:
        return None
    names = {f.name for f in dataclasses.fields(Machine)}
    return Machine(**{k: v for k, v in data.items() if k in names})


def new_state(
    sweep_id: str, spec_path: str, raw_spec: dict[str, Any], results_dir: str, labels: list[str],
    run_keys: list[str], prices: list[float | None],
) -> dict[str, Any]:  # fmt: skip
    """A fresh state: every target pending, every run pending."""
    return {
        "state_version": STATE_VERSION,
        "id": sweep_id,
        "name": raw_spec.get("name"),
        "spec_path": spec_path,
        "spec": raw_spec,
        "results_dir": results_dir,
        "created_at": iso(utc_now()),
        "updated_at": iso(utc_now()),
        "status": "created",
        "controller_pid": os.getpid(),
        "targets": [
            {
                "index": i,
                "label": label,
                "state": PENDING,
                "detail": "",
                "reason": None,
                "machine": None,
                "usd_per_hour": price,
                "launched_at": None,
                "terminated_at": None,
                "runs": {
                    key: {"status": PENDING, "result_ids": [], "error": None} for key in run_keys
                },
            }
            for i, (label, price) in enumerate(zip(labels, prices, strict=True))
        ],
    }


class StateFile:
    """A sweep's state, saved atomically (temp file + rename) under a lock after each change."""

    def __init__(self, data: dict[str, Any], path: Path | None = None) -> None:
        self.data = data
        self.path = path or state_path(data["id"])
        self.lock = threading.RLock()

    def save(self) -> None:
        with self.lock:
            self.data["updated_at"] = iso(utc_now())
            atomic_write_text(self.path, json.dumps(self.data, indent=2) + "\n")

    def target(self, index: int) -> dict[str, Any]:
        return self.data["targets"][index]

    def update_target(self, index: int, **changes: Any) -> None:
        with self.lock:
            self.data["targets"][index].update(changes)
            self.save()

    def update_run(self, index: int, key: str, **changes: Any) -> None:
        with self.lock:
            self.data["targets"][index]["runs"][key].update(changes)
            self.save()

    def set_status(self, status: str) -> None:
        with self.lock:
            self.data["status"] = status
            self.save()


class StateError(ValueError):
    """A state file that cannot be read; names the file."""


def load_state(sweep_id_or_path: str) -> StateFile:
    """The state of a sweep by id (or a path to its file)."""
    path = Path(sweep_id_or_path)
    if not (path.suffix == ".json" and path.exists()):
        try:
            path = state_path(sweep_id_or_path)
        except ValueError as exc:
            raise StateError(str(exc)) from None
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        known = [p.stem for p in list_state_paths()]
        hint = f"; known: {', '.join(known[-5:])}" if known else "; no sweeps yet"
        raise StateError(f"no sweep {sweep_id_or_path!r} in {sweeps_dir()}{hint}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise StateError(f"{path}: not a readable sweep state ({exc})") from None
    if not isinstance(data, dict) or data.get("state_version") != STATE_VERSION:
        raise StateError(f"{path}: not a sweep state file of version {STATE_VERSION}")
    return StateFile(data, path)


def list_state_paths() -> list[Path]:
    """Every sweep's state file, oldest first."""
    directory = sweeps_dir()
    if not directory.is_dir():
        return []
    return sorted((p for p in directory.glob("*.json") if not p.name.startswith(".")),
                  key=lambda p: p.stat().st_mtime)  # fmt: skip


def spend_usd(target: dict[str, Any], now: dt.datetime | None = None) -> float:
    """Dollars a target has cost so far: price x (terminated or now - launched) hours,
    plus what earlier attempts (before a resume) cost."""
    before = float(target.get("spent_before_usd") or 0.0)
    price = target.get("usd_per_hour") or 0.0
    if not target.get("launched_at") or not price:
        return before
    end = parse_iso(target["terminated_at"]) if target.get("terminated_at") else (now or utc_now())
    hours = max(0.0, (end - parse_iso(target["launched_at"])).total_seconds() / 3600)
    return before + price * hours
