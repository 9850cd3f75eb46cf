"""One controller per sweep: an OS lock (flock) on a file beside the sweep's state.

`gpuplan sweep run`, `resume` and `cleanup` take the lock of their sweep and hold it for
the life of the process; the file names who holds it (process id, host, command, since
when). The kernel releases a flock when its process ends, however it ends (kill -9
included), so a held lock means a live controller, and a free lock whose file still
names a holder means that holder is gone without a clean exit (killed or crashed).

- A second controller is refused while the lock is held, with the holder's process id
  and host (`SweepLocked`).
- A sweep left by a dead controller is taken over only when asked (`takeover=True`,
  `--takeover` in the CLI), so a user does not continue a sweep they thought was running
  elsewhere without saying so.
- Readers (`status`, `list`) ask `holder()` without taking the lock.

The folder must be on a file system whose `flock` works across the processes that share
it (any local file system; NFS v4 maps it to its own locks).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.sweep import state as st


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) a sweep's lock."""

    pid: int
    host: str
    command: str  # run | resume | cleanup
    since: str  # ISO 8601 UTC

    def describe(self) -> str:
        return (
            f"process {self.pid} on {self.host} (`gpuplan sweep {self.command}` since {self.since})"
        )


@dataclass(frozen=True)
class LockState:
    """What a reader sees: the holder named in the file (None: never held, or released
    cleanly) and whether the lock is held now."""

    holder: Holder | None
    held: bool

    @property
    def stale(self) -> bool:
        """A holder is named but does not hold the lock: it ended without releasing it."""
        return self.holder is not None and not self.held


class SweepLocked(RuntimeError):
    """Another controller holds the sweep, or a dead one left it and no takeover was asked."""


def lock_path(sweep_id: str) -> Path:
    """The lock file of a sweep: <sweeps dir>/<id>.lock, beside <id>.json."""
    return st.sweeps_dir() / f"{st.check_sweep_id(sweep_id)}.lock"


def _read_holder(fd: int) -> Holder | None:
    try:
        raw = os.pread(fd, 4096, 0)
        data: Any = json.loads(raw.decode()) if raw.strip() else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return Holder(int(data["pid"]), str(data["host"]), str(data["command"]), str(data["since"]))
    except (KeyError, TypeError, ValueError):
        return None


def holder(sweep_id: str) -> LockState:
    """Who holds the lock of `sweep_id`, read without taking it (a shared flock tried
    and released at once)."""
    path = lock_path(sweep_id)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return LockState(None, False)
    try:
        named = _read_holder(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return LockState(named, True)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return LockState(named, False)
    finally:
        os.close(fd)


class ControllerLock:
    """The held lock of one sweep; `release()` (or the process ending) gives it up."""

    def __init__(self, sweep_id: str, fd: int, previous: Holder | None) -> None:
        self.sweep_id = sweep_id
        self._fd: int | None = fd
        self.previous = previous  # the dead controller taken over, if any

    def release(self) -> None:
        """Clear the holder (a clean exit) and unlock; idempotent."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> ControllerLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


def acquire(sweep_id: str, command: str, *, takeover: bool = False,
            stale_ok: bool = False) -> ControllerLock:  # fmt: skip
    """Take the lock of `sweep_id` for this process, or SweepLocked saying who holds it.

    A lock left by a dead controller is taken only with `takeover` (or `stale_ok`, for
    commands that end a sweep rather than continue it: cleanup). The file descriptor is
    not inherited by child processes (ssh, pip), so only this process holds the lock.
    """
    path = lock_path(sweep_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        named = _read_holder(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            who = named.describe() if named else "another process"
            raise SweepLocked(
                f"sweep {sweep_id} is being run by {who}; only one controller may run a "
                "sweep: wait for it to end, or stop it (Ctrl-C there) and then resume"
            ) from None
        if named is not None and not (takeover or stale_ok):
            fcntl.flock(fd, fcntl.LOCK_UN)
            raise SweepLocked(
                f"sweep {sweep_id} was being run by {named.describe()}, which is gone "
                "without a clean exit (killed or crashed; the OS released its lock); "
                f"continue it with `gpuplan sweep resume {sweep_id} --takeover`"
            )
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
              "since": st.iso(st.utc_now())}  # fmt: skip
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode(), 0)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    return ControllerLock(sweep_id, fd, named)


LIVE_STATUSES = ("created", "running")  # a sweep's status while its controller works
GONE = "its controller ended without finishing (killed or crashed)"


def as_seen(data: dict[str, Any]) -> dict[str, Any]:
    """A sweep's state as `status` and `list` show it: one whose status says a controller
    is at work but whose lock nobody holds reads "interrupted", each unfinished target
    too, and its clock stops at the state's last write (`as_of`), so elapsed time and
    spend stop growing. Other states are returned as they are."""
    if data.get("status") not in LIVE_STATUSES:
        return data
    try:
        lock = holder(str(data["id"]))
    except (OSError, ValueError):
        return data
    if lock.held:
        return data
    seen = json.loads(json.dumps(data))
    why = f"{GONE}: {lock.holder.describe()}" if lock.holder else GONE
    seen.update(status="interrupted", controller_gone=why, as_of=data.get("updated_at"))
    for t in seen["targets"]:
        if t["state"] not in (*st.FINAL_STATES, st.PENDING, st.INTERRUPTED):
            t.update(state=st.INTERRUPTED, detail="", reason=t.get("reason") or GONE)
    return seen


def as_of(data: dict[str, Any]) -> Any:
    """The time a sweep's spend and elapsed time are counted to: now, or for a sweep
    whose controller is gone (as_seen) its state's last write."""
    stamp = data.get("as_of")
    return st.parse_iso(stamp) if stamp else st.utc_now()
