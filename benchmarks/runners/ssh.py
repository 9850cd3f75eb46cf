"""Run benchmarks on a machine over SSH with the OpenSSH client (`ssh`, `scp`).

Every command runs with BatchMode (never a password prompt), a ConnectTimeout and
keep-alives; host names go to `ssh` as given, so ~/.ssh/config aliases (ProxyJump,
IdentityFile, User) are honoured. A Machine's port/user/identity_file are passed only
when set. Extra client options come from `extra_options` or $GPUPLAN_SSH_OPTIONS
(e.g. "-o UserKnownHostsFile=/tmp/kh -o StrictHostKeyChecking=accept-new").

Steps of one target: wait_for_ssh -> install (a wheel of this gpuplan into a fresh venv
that reuses the image's torch, or an existing `remote_python`) -> run_benchmark (one
`python -m planner.cli bench run ... --out REMOTE_DIR`, output streamed) ->
fetch_results (scp the JSON files back into a local folder).

Every ssh/scp process is registered so that stop_all() can end them on Ctrl-C.
"""

from __future__ import annotations

import collections
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from benchmarks.runners.machine import Machine

SSH_OPTIONS_ENV = "GPUPLAN_SSH_OPTIONS"
CONNECT_TIMEOUT_S = 10
SSH_FAILED = 255  # ssh's own exit status (as opposed to the remote command's)
TAIL_LINES = 20
DEFAULT_RUN_LIMIT_S = 3600  # a remote benchmark run without a given limit ends after this
SAFE_REMOTE_PATH = re.compile(r"^[A-Za-z0-9_./~-]+$")

_live: set[subprocess.Popen[str]] = set()
_live_lock = threading.Lock()


class SshError(RuntimeError):
    """ssh itself failed (unreachable, refused, wrong key): the message says which."""


class RemoteCommandFailed(RuntimeError):
    """The remote command ran and exited non-zero; `tail` holds the last output lines."""

    def __init__(self, what: str, code: int, tail: list[str]) -> None:
        shown = "\n".join(tail) if tail else "(no output)"
        super().__init__(f"{what} exited with {code}; last output:\n{shown}")
        self.code = code
        self.tail = tail


def extra_options(given: Sequence[str] | None = None) -> list[str]:
    """Extra ssh/scp client options: `given`, else $GPUPLAN_SSH_OPTIONS split as a shell would."""
    if given is not None:
        return list(given)
    return shlex.split(os.environ.get(SSH_OPTIONS_ENV, ""))


def _common(machine: Machine, extra: Sequence[str] | None, timeout_s: int) -> list[str]:
    options = [
        "-o", "BatchMode=yes",
        "-o", f"ConnectTimeout={timeout_s}",
        "-o", "ServerAliveInterval=15",
        "-o", "ServerAliveCountMax=4",
    ]  # fmt: skip
    if machine.identity_file:
        options += ["-i", str(Path(machine.identity_file).expanduser()), "-o", "IdentitiesOnly=yes"]
    if machine.user:
        options += ["-o", f"User={machine.user}"]
    return options + extra_options(extra)


def ssh_command(
    machine: Machine, command: str, extra: Sequence[str] | None = None,
    timeout_s: int = CONNECT_TIMEOUT_S,
) -> list[str]:  # fmt: skip
    """The argv of `ssh` running `command` (a shell command line) on the machine."""
    if machine.backend == "local":  # this machine: the same command line from $HOME, no ssh
        return ["bash", "-c", f'cd "$HOME" && {command}']
    port = ["-p", str(machine.port)] if machine.port else []
    return ["ssh", *_common(machine, extra, timeout_s), *port, "--", machine.host, command]


def scp_command(
    machine: Machine, sources: Iterable[str], destination: str, extra: Sequence[str] | None = None,
    timeout_s: int = CONNECT_TIMEOUT_S,
) -> list[str]:  # fmt: skip
    """The argv of `scp` (remote paths written as `:path`, this machine's host filled in)."""
    port = ["-P", str(machine.port)] if machine.port else []

    def where(path: str) -> str:
        return f"{machine.host}{path}" if path.startswith(":") else path

    return ["scp", "-q", *_common(machine, extra, timeout_s), *port, "--",
            *[where(s) for s in sources], where(destination)]  # fmt: skip


def describe_ssh_failure(machine: Machine, stderr_tail: list[str]) -> str:
    """Words for ssh's own failure (exit 255) from its stderr."""
    text = " ".join(stderr_tail)
    where = f"{machine.user + '@' if machine.user else ''}{machine.host}" + (
        f":{machine.port}" if machine.port else ""
    )
    if "Permission denied" in text:
        return (
            f"ssh to {where} was refused (Permission denied): the key was not accepted; "
            "check identity_file and user"
        )
    if "Connection refused" in text:
        return f"ssh to {where}: connection refused (no sshd listening, or the machine is gone)"
    if "timed out" in text:
        return (
            f"ssh to {where} timed out (machine down or a firewall drops port {machine.port or 22})"
        )
    if "Host key verification failed" in text or "REMOTE HOST IDENTIFICATION" in text:
        return f"ssh to {where}: host key verification failed; check known_hosts"
    if "Could not resolve hostname" in text:
        return f"ssh to {where}: unknown host name (not in DNS or ~/.ssh/config)"
    last = stderr_tail[-1] if stderr_tail else "no message"
    return f"ssh to {where} failed: {last}"


def _track(proc: subprocess.Popen[str]) -> None:
    with _live_lock:
        _live.add(proc)


def _untrack(proc: subprocess.Popen[str]) -> None:
    with _live_lock:
        _live.discard(proc)


def stop_all() -> None:
    """End every ssh/scp process still running (Ctrl-C)."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


def run_streamed(
    argv: list[str], what: str, machine: Machine, on_line: Callable[[str], None] | None = None,
    timeout_s: float | None = None, hold_stdin: bool = False,
) -> list[str]:  # fmt: skip
    """Run ssh/scp, passing each output line to on_line; the output's tail on success.

    `hold_stdin`: the command's stdin is a pipe this process holds open, never writes to
    and closes at the end; if this process dies (kill -9 included) the remote side reads
    EOF there (see self_limiting). Raises SshError when ssh itself failed (exit 255) and
    RemoteCommandFailed when the remote command exited non-zero.
    """
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE if hold_stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, bufsize=1, start_new_session=True,
    )  # fmt: skip
    _track(proc)
    timer = threading.Timer(timeout_s, proc.kill) if timeout_s else None
    try:
        if timer:
            timer.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            tail.append(line)
            if on_line:
                on_line(line)
        code = proc.wait()
    finally:
        if timer:
            timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stdin is not None:
            proc.stdin.close()
        _untrack(proc)
    if code == 0:
        return list(tail)
    if code == SSH_FAILED or (argv[0] == "scp" and _looks_like_ssh_failure(tail)):
        raise SshError(describe_ssh_failure(machine, list(tail)))
    if code < 0 and timeout_s:
        raise RemoteCommandFailed(f"{what} (stopped after {timeout_s:.0f} s)", code, list(tail))
    raise RemoteCommandFailed(what, code, list(tail))


def _looks_like_ssh_failure(tail: Iterable[str]) -> bool:
    text = " ".join(tail)
    return any(
        s in text
        for s in ("Permission denied", "Connection refused", "timed out", "Connection closed")
    )


def run_remote(
    machine: Machine, command: str, what: str, on_line: Callable[[str], None] | None = None,
    timeout_s: float | None = None, extra: Sequence[str] | None = None,
    hold_stdin: bool = False,
) -> list[str]:  # fmt: skip
    """Run one shell command line on the machine (see run_streamed)."""
    argv = ssh_command(machine, command, extra)
    return run_streamed(argv, what, machine, on_line, timeout_s, hold_stdin)


def self_limiting(command: str, limit_s: int, kill_after_s: int = 30) -> str:
    """`command` as a remote shell line that ends on its own, whatever the controller does.

    It runs in its own session (setsid) under `timeout` (killed after `limit_s`, then
    SIGKILL `kill_after_s` later), and a watcher kills its whole process group as soon as
    the remote shell's stdin reaches EOF: when the ssh connection drops or the controller
    holding that stdin dies (run it with hold_stdin=True). Needs setsid (util-linux) and
    timeout (coreutils). Its stdin is saved as fd 3 first: a shell gives a background job
    /dev/null as stdin unless it is redirected explicitly.
    """
    return (
        "exec 3<&0; "
        f"setsid timeout -k {kill_after_s} {limit_s} sh -c {shlex.quote(command)} "
        "</dev/null 3<&- & pid=$!; "
        "(while read -r _; do :; done; kill -s TERM -- -$pid) <&3 >/dev/null 2>&1 & "
        "watcher=$!; exec 3<&-; wait $pid; code=$?; "
        "{ kill $watcher; wait $watcher; } 2>/dev/null; exit $code"
    )


def wait_for_ssh(
    machine: Machine, timeout_s: float, poll_s: float = 3.0, extra: Sequence[str] | None = None,
    stop: threading.Event | None = None,
) -> None:  # fmt: skip
    """Block until `ssh true` works; SshError with the last reason after `timeout_s`.

    A refused key fails at once: waiting will not change it.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            run_remote(machine, "true", "ssh true", timeout_s=CONNECT_TIMEOUT_S + 5, extra=extra)
            return
        except (SshError, RemoteCommandFailed) as exc:
            if "Permission denied" in str(exc) or time.monotonic() + poll_s > deadline:
                raise SshError(f"{exc} (waited {timeout_s:.0f} s for ssh)") from None
        if stop is not None and stop.wait(poll_s):
            raise SshError("stopped while waiting for ssh")
        if stop is None:
            time.sleep(poll_s)


def env_prefix(env: Iterable[tuple[str, str]]) -> str:
    """`env A=1 B=2 ` for a remote command line (values quoted), or ''."""
    pairs = [f"{name}={shlex.quote(value)}" for name, value in env]
    return f"env {' '.join(pairs)} " if pairs else ""


def source_root() -> Path:
    """The folder holding this gpuplan's pyproject.toml (to build a wheel from)."""
    return Path(__file__).resolve().parents[2]


def build_wheel(out_dir: Path) -> Path:
    """A wheel of this gpuplan, built locally without network (pip wheel --no-deps)."""
    root = source_root()
    if not (root / "pyproject.toml").exists():
        raise SshError(
            f"cannot build a gpuplan wheel: {root} is not a source checkout; "
            "give each target a remote_python that has gpuplan[bench] installed"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
            "-q", "-w", str(out_dir), str(root)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wheels = sorted(out_dir.glob("gpuplan-*.whl"))
    if done.returncode != 0 or not wheels:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise SshError(f"building the gpuplan wheel failed: {' '.join(tail)}")
    return wheels[-1]


def install(
    machine: Machine, remote_root: str, wheel: Path | None, remote_python: str | None,
    env: Iterable[tuple[str, str]] = (), on_line: Callable[[str], None] | None = None,
    extra: Sequence[str] | None = None,
) -> str:  # fmt: skip
    """Make gpuplan[bench] runnable on the machine; the remote python to use.

    With `remote_python`: check it imports gpuplan. Otherwise copy the wheel, create
    REMOTE_ROOT/venv with --system-site-packages (the image's CUDA torch is reused) and
    pip install 'WHEEL[bench]' into it.
    """
    check_remote_path(remote_root)
    prefix = env_prefix(env)
    if remote_python:
        python = remote_python
    else:
        if wheel is None:
            raise SshError("no wheel to install and no remote_python given")
        run_remote(machine, f"mkdir -p {remote_root}", "mkdir", extra=extra)
        streamed = scp_command(machine, [str(wheel)], f":{remote_root}/{wheel.name}", extra)
        run_streamed(streamed, "scp of the gpuplan wheel", machine)
        venv = f"{remote_root}/venv"
        command = (
            f"set -e; python3 -m venv --system-site-packages {venv}; "
            f"{venv}/bin/python -m pip install -q --disable-pip-version-check "
            f"'{remote_root}/{wheel.name}[bench]'"
        )
        run_remote(machine, command, "installing gpuplan[bench]", on_line, extra=extra)
        python = f"{venv}/bin/python"
    # Found without importing (torch takes seconds): gpuplan's CLI, its benchmarks, torch.
    probe = "import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in (" \
        "'planner.cli', 'benchmarks.harness', 'torch')))"  # fmt: skip
    check = f"{prefix}{shlex.quote(python)} -c {shlex.quote(probe)}"
    try:
        run_remote(machine, check, "import check", extra=extra)
    except RemoteCommandFailed as exc:
        raise RemoteCommandFailed(
            f"{python} on {machine.host} cannot import gpuplan[bench] "
            "(install it there, or leave remote_python out to install a wheel)",
            exc.code, exc.tail,
        ) from None  # fmt: skip
    return python


def check_remote_path(path: str) -> str:
    """A remote folder name safe to put on a shell command line unquoted, or ValueError."""
    if not SAFE_REMOTE_PATH.match(path) or ".." in path.split("/"):
        raise ValueError(f"remote folder {path!r}: use letters, digits and ._/~- only")
    return path


def run_benchmark(
    machine: Machine, python: str, argv: Sequence[str], remote_out: str,
    env: Iterable[tuple[str, str]] = (), on_line: Callable[[str], None] | None = None,
    timeout_s: float | None = None, extra: Sequence[str] | None = None,
) -> list[str]:  # fmt: skip
    """Run `python -m planner.cli bench run ARGV --out REMOTE_OUT` remotely, streaming output.

    The remote run is self_limiting: it ends by itself after `timeout_s` (default an hour)
    and as soon as this controller or its ssh connection is gone.
    """
    check_remote_path(remote_out)
    args = " ".join(shlex.quote(a) for a in argv)
    command = (
        f"mkdir -p {remote_out} && rm -f {remote_out}/*.json && "
        f"{env_prefix(env)}PYTHONUNBUFFERED=1 {shlex.quote(python)} -m planner.cli bench run "
        f"{args} --out {remote_out} --format json"
    )
    limited = self_limiting(command, math.ceil(timeout_s or DEFAULT_RUN_LIMIT_S))
    return run_remote(
        machine, limited, "gpuplan bench run", on_line, timeout_s, extra, hold_stdin=True
    )


def fetch_results(
    machine: Machine, remote_out: str, extra: Sequence[str] | None = None
) -> tuple[Path, list[Path]]:
    """Copy REMOTE_OUT/*.json into a new local temporary folder: (folder, files)."""
    check_remote_path(remote_out)
    local = Path(tempfile.mkdtemp(prefix="gpuplan-fetch-"))
    if machine.backend == "local":
        home = Path.home()
        for path in (home / remote_out).expanduser().glob("*.json"):
            shutil.copy2(path, local / path.name)
        return local, sorted(local.glob("*.json"))
    argv = scp_command(machine, [f":{remote_out}/*.json"], str(local), extra)
    run_streamed(argv, "scp of the results", machine)
    return local, sorted(local.glob("*.json"))
