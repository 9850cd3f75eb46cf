"""Run benchmarks on a machine over SSH with the OpenSSH client (`ssh`, `scp`).

Every command runs with BatchMode (never a password prompt), a ConnectTimeout and
keep-alives; host names go to `ssh` as given, so ~/.ssh/config aliases (ProxyJump,
IdentityFile, User) are honoured. A Machine's port/user/identity_file are passed only
when set. Extra client options come from `extra_options` or $GPUPLAN_SSH_OPTIONS
(e.g. "-o UserKnownHostsFile=/tmp/kh -o StrictHostKeyChecking=accept-new").

Steps of one target: wait_for_ssh -> install (a wheel of this gpuplan, runners/ship.py,
into a new or reused venv with a torch that fits the machine, runners/remote_install.py;
or an existing `remote_python`) -> run_benchmark (one
`python -m planner.cli.main bench run ... --out REMOTE_DIR`, output streamed) ->
fetch_results (scp the JSON files back into a local folder).

Every ssh/scp process is registered so that stop_all() can end them on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from benchmarks.runners.machine import Machine
from benchmarks.runners.remote_install import install_script
from benchmarks.runners.remote_output import CHUNK_BYTES, LineReader
from benchmarks.runners.ship import Wheel
from benchmarks.safe_paths import MAX_RESULT_BYTES

SSH_OPTIONS_ENV = "GPUPLAN_SSH_OPTIONS"
CONNECT_TIMEOUT_S = 10
SSH_FAILED = 255  # ssh's own exit status (as opposed to the remote command's)
DEFAULT_RUN_LIMIT_S = 3600  # a remote benchmark run without a given limit ends after this
KILL_AFTER_S = 10  # from TERM to KILL of a remote process group
# Seconds each install step may take (the remote side ends itself at the same limit).
STEP_LIMIT_S = {"mkdir": 60, "wheel copy": 300, "pip install": 1200, "import check": 120}
SAFE_REMOTE_PATH = re.compile(r"\A[A-Za-z0-9_./~-]+\Z")
RESULT_FILE_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.json\Z")
MAX_RESULT_FILES = 64  # result files one run may bring back

_live: set[subprocess.Popen[bytes]] = set()
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
    """The argv of `scp` (remote paths written as `:path`, this machine's host filled in);
    for backend "local", `cp` (a relative `:path` starts at $HOME, as ssh_command's do)."""
    if machine.backend == "local":
        home = Path.home()

        def here(path: str) -> str:
            return str(home / path[1:]) if path.startswith(":") else path

        return ["cp", "--", *[here(s) for s in sources], here(destination)]
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


def _track(proc: subprocess.Popen[bytes]) -> None:
    with _live_lock:
        _live.add(proc)


def _untrack(proc: subprocess.Popen[bytes]) -> None:
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


class _Started:
    """A started ssh/scp process whose stdout is read in bounded chunks."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.timed_out = threading.Event()

    def expire(self) -> None:
        self.timed_out.set()
        self.proc.kill()

    def chunks(self) -> Iterator[bytes]:
        """stdout, CHUNK_BYTES at a time, until EOF."""
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), CHUNK_BYTES):
            yield chunk


@contextlib.contextmanager
def _started(
    argv: list[str], timeout_s: float | None, stdin: int, stderr: int
) -> Iterator[_Started]:
    """`argv` started in a session of its own and registered for stop_all(); killed after
    `timeout_s` seconds (then `timed_out` is set). On leaving: killed if still running,
    waited for, its pipes closed and unregistered, whatever happened inside."""
    proc = subprocess.Popen(
        argv, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, bufsize=0,
        start_new_session=True,
    )  # fmt: skip
    _track(proc)
    run = _Started(proc)
    timer = threading.Timer(timeout_s, run.expire) if timeout_s else None
    try:
        if timer:
            timer.start()
        yield run
    finally:
        if timer:
            timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        _untrack(proc)


def run_streamed(
    argv: list[str], what: str, machine: Machine, on_line: Callable[[str], None] | None = None,
    timeout_s: float | None = None, hold_stdin: bool = False,
) -> list[str]:  # fmt: skip
    """Run ssh/scp, passing each output line to on_line; the output's tail on success.

    Output is read in bounded chunks and made plain (remote_output.LineReader: no escape
    sequences, lines cut at MAX_LINE_CHARS, a tail of TAIL_LINES lines), so a remote that
    prints without end holds no more memory than that. `timeout_s` ends the local process
    (the remote side ends itself: see self_limiting). `hold_stdin`: the command's stdin is
    a pipe this process holds open, never writes to and closes at the end; if this process
    dies (kill -9 included) the remote side reads EOF there (see self_limiting). Raises
    SshError when ssh itself failed (exit 255) and RemoteCommandFailed when the remote
    command exited non-zero.
    """
    reader = LineReader(on_line)
    stdin = subprocess.PIPE if hold_stdin else subprocess.DEVNULL
    with _started(argv, timeout_s, stdin, subprocess.STDOUT) as run:
        for chunk in run.chunks():
            reader.feed(chunk)
        reader.close()
        code = run.proc.wait()
    tail = list(reader.tail)
    if code == 0:
        return tail
    if run.timed_out.is_set():
        raise RemoteCommandFailed(f"{what} (stopped after {timeout_s:.0f} s)", code, tail)
    if code == SSH_FAILED or (argv[0] == "scp" and _looks_like_ssh_failure(tail)):
        raise SshError(describe_ssh_failure(machine, tail))
    raise RemoteCommandFailed(what, code, tail)


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


def self_limiting(command: str, limit_s: int, kill_after_s: int = KILL_AFTER_S) -> str:
    """`command` as a remote shell line that ends on its own, whatever the controller does.

    The command runs in a session and process group of its own (setsid). Its whole group
    gets TERM, then KILL `kill_after_s` seconds later (a process that ignores TERM ends
    too), when `limit_s` seconds have passed, and as soon as the remote shell's stdin
    reaches EOF: when the ssh connection drops or the controller holding that stdin dies
    (run it with hold_stdin=True). What the command left in its group when it ends is
    ended the same way. Runs under /bin/sh whatever the login shell is; needs setsid
    (util-linux). Its stdin is saved as fd 3 first: a shell gives a background job
    /dev/null as stdin unless it is redirected explicitly. `kill -TERM -PGID` is the form
    both dash and bash accept (dash's kill takes no `--`).
    """
    end = f"kill -TERM -$pid; sleep {kill_after_s}; kill -KILL -$pid"
    script = (
        "exec 3<&0\n"
        f"setsid sh -c {shlex.quote(command)} </dev/null 3<&- & pid=$!\n"
        # The limit: its own group, so that its sleep goes when it is cancelled.
        f'setsid sh -c \'sleep {limit_s}; kill -TERM -"$1"; sleep {kill_after_s}; '
        'kill -KILL -"$1"\' gpuplan-limit "$pid" </dev/null >/dev/null 2>&1 3<&- & '
        "timer=$!\n"
        f"(while read -r _; do :; done; {end}) <&3 >/dev/null 2>&1 & watcher=$!\n"
        "exec 3<&-\n"
        # Quiet: a job message ("Terminated") to a dropped connection would end this
        # shell by SIGPIPE before it cancels the timer.
        "wait $pid 2>/dev/null; code=$?\n"
        "kill -TERM -$timer 2>/dev/null\n"
        f"if kill -0 -$pid 2>/dev/null; then {{ {end}; }} 2>/dev/null; fi\n"
        "kill $watcher 2>/dev/null\n"
        "exit $code\n"
    )
    return f"exec /bin/sh -c {shlex.quote(script)}"


def wait_for_ssh(
    machine: Machine, timeout_s: float, poll_s: float = 3.0, extra: Sequence[str] | None = None,
    stop: threading.Event | None = None,
) -> None:  # fmt: skip
    """Block until `ssh true` works; SshError with the last reason after `timeout_s`.

    Failures that waiting cannot change fail at once (a refused key, an unknown host
    name, a changed host key, a bad ssh option): only a machine still booting is waited for.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            run_remote(machine, "true", "ssh true", timeout_s=CONNECT_TIMEOUT_S + 5, extra=extra)
            return
        except (SshError, RemoteCommandFailed) as exc:
            if is_permanent(exc):
                raise SshError(str(exc)) from None
            if time.monotonic() + poll_s > deadline:
                raise SshError(f"{exc} (waited {timeout_s:.0f} s for ssh)") from None
        if stop is not None and stop.wait(poll_s):
            raise SshError("stopped while waiting for ssh")
        if stop is None:
            time.sleep(poll_s)


PERMANENT_SSH_FAILURES = (
    "Permission denied",
    "Could not resolve hostname",
    "unknown host name",
    "Host key verification failed",
    "REMOTE HOST IDENTIFICATION",
    "host key verification failed",
    "Bad configuration option",
    "command-line line",
    "Unsupported option",
    "illegal option",
    "unknown option",
    "Too many authentication failures",
    "no such identity",
    "Invalid argument",
)


def is_permanent(exc: Exception) -> bool:
    """Whether an ssh failure will be the same on the next try (so waiting is pointless)."""
    text = str(exc)
    return any(marker in text for marker in PERMANENT_SSH_FAILURES)


def env_prefix(env: Iterable[tuple[str, str]]) -> str:
    """`env A=1 B=2 ` for a remote command line (values quoted), or ''."""
    pairs = [f"{name}={shlex.quote(value)}" for name, value in env]
    return f"env {' '.join(pairs)} " if pairs else ""


def install(
    machine: Machine, remote_root: str, wheel: Wheel | None, remote_python: str | None,
    env: Iterable[tuple[str, str]] = (), on_line: Callable[[str], None] | None = None,
    extra: Sequence[str] | None = None, limit_s: float | None = None, venv: str | None = None,
    torch_index_url: str | None = None, constraints: Path | None = None,
) -> str:  # fmt: skip
    """Make gpuplan[bench] runnable on the machine; the remote python to use.

    With `remote_python`: check it imports gpuplan. Otherwise copy the wheel (unless the
    machine has that file already: a SkyPilot file mount) and the user's constraints file,
    then run remote_install.install_script: create or reuse `venv` (default
    REMOTE_ROOT/venv), a torch that fits the machine, 'WHEEL[bench]'. Each step ends
    within STEP_LIMIT_S (and within `limit_s` seconds, the target's time left) on both
    sides of the connection; a failed step raises with its last output lines.
    """
    check_remote_path(remote_root)
    prefix = env_prefix(env)

    def step(command: str, what: str, key: str, lines: Callable[[str], None] | None = None) -> None:
        limit = _step_limit(key, limit_s)
        run_remote(
            machine, self_limiting(command, limit), what, lines, limit + KILL_AFTER_S, extra,
            hold_stdin=True,
        )  # fmt: skip

    if remote_python:
        python = remote_python
    else:
        if wheel is None:
            raise SshError("no wheel to install and no remote_python given")
        venv = check_remote_path(venv or f"{remote_root}/venv")
        folder = wheel_folder(remote_root, wheel)
        remote_wheel = f"{folder}/{wheel.name}"
        step(f"mkdir -p {folder}", "mkdir", "mkdir")
        if not _has_file(machine, remote_wheel, wheel.sha256, extra, limit_s):
            copy = scp_command(machine, [str(wheel.path)], f":{remote_wheel}", extra)
            run_streamed(copy, "scp of the gpuplan wheel", machine,
                         timeout_s=_step_limit("wheel copy", limit_s))  # fmt: skip
        remote_constraints = None
        if constraints is not None:
            remote_constraints = f"{folder}/constraints-{wheel.digest}.txt"
            copy = scp_command(machine, [str(constraints)], f":{remote_constraints}", extra)
            run_streamed(copy, "scp of the constraints file", machine,
                         timeout_s=_step_limit("wheel copy", limit_s))  # fmt: skip
        script = install_script(
            venv, remote_wheel, wheel.version, wheel.digest, torch_index_url, remote_constraints
        )
        step(f"{prefix}sh -c {shlex.quote(script)}", "installing gpuplan[bench]", "pip install",
             on_line)  # fmt: skip
        python = f"{venv}/bin/python"
    # Found without importing (torch takes seconds): gpuplan's CLI, its benchmarks, torch.
    probe = "import importlib.util as u, sys; sys.exit(not all(u.find_spec(m) for m in (" \
        "'planner.cli.main', 'benchmarks.harness', 'torch')))"  # fmt: skip
    check = f"{prefix}{shlex.quote(python)} -c {shlex.quote(probe)}"
    try:
        step(check, "import check", "import check")
    except RemoteCommandFailed as exc:
        if "stopped after" in str(exc):
            raise
        raise RemoteCommandFailed(
            f"{python} on {machine.host} cannot import gpuplan[bench] "
            "(install it there, or leave remote_python out to install a wheel)",
            exc.code, exc.tail,
        ) from None  # fmt: skip
    return python


def wheel_folder(remote_root: str, wheel: Wheel) -> str:
    """Where a wheel goes on the machine: REMOTE_ROOT/wheels/<version>-<digest>."""
    return f"{remote_root}/wheels/{wheel.version}-{wheel.digest}"


def _has_file(
    machine: Machine, path: str, sha256: str, extra: Sequence[str] | None, limit_s: float | None
) -> bool:
    """Whether the machine holds `path` with this sha256 already (one short ssh call)."""
    check = (
        f"[ -f {shlex.quote(path)} ] && "
        f'[ "$(sha256sum < {shlex.quote(path)} | cut -c1-64)" = {sha256} ]'
    )
    limit = _step_limit("mkdir", limit_s)
    try:
        run_remote(machine, self_limiting(check, limit), "wheel check", None,
                   limit + KILL_AFTER_S, extra, hold_stdin=True)  # fmt: skip
    except RemoteCommandFailed:
        return False
    return True


def _step_limit(key: str, limit_s: float | None) -> int:
    """Whole seconds an install step may take: its own limit, within the time left."""
    limit = float(STEP_LIMIT_S[key])
    if limit_s is not None:
        limit = min(limit, limit_s)
    return max(1, math.ceil(limit))


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
    """Run `python -m planner.cli.main bench run ARGV --out REMOTE_OUT` remotely, streaming output.

    The remote run is self_limiting: it ends by itself after `timeout_s` (default an hour)
    and as soon as this controller or its ssh connection is gone.
    """
    check_remote_path(remote_out)
    args = " ".join(shlex.quote(a) for a in argv)
    command = (
        f"mkdir -p {remote_out} && rm -f {remote_out}/*.json && "
        f"{env_prefix(env)}PYTHONUNBUFFERED=1 {shlex.quote(python)} -m planner.cli.main bench run "
        f"{args} --out {remote_out} --format json"
    )
    limited = self_limiting(command, math.ceil(timeout_s or DEFAULT_RUN_LIMIT_S))
    return run_remote(
        machine, limited, "gpuplan bench run", on_line, timeout_s, extra, hold_stdin=True
    )


def fetch_results(
    machine: Machine, remote_out: str, extra: Sequence[str] | None = None,
    max_bytes: int = MAX_RESULT_BYTES, timeout_s: float = 300.0,
) -> tuple[Path, list[Path]]:  # fmt: skip
    """Copy REMOTE_OUT/*.json into a new local temporary folder: (folder, files).

    Nothing is trusted: the remote lists its files first (kind and size, links not
    followed); a link, a special file, a name outside RESULT_FILE_NAME, a file over
    `max_bytes` or more than MAX_RESULT_FILES files is refused before any copy. Each file
    is then read through `cat` with the copy stopped at `max_bytes` (a file that grew,
    or was swapped for /dev/zero, is refused too). The folder is removed when anything
    fails; the caller removes it after use. Raises RemoteResultRefused or SshError.
    """
    check_remote_path(remote_out)
    local = Path(tempfile.mkdtemp(prefix="gpuplan-fetch-"))
    try:
        names = _list_results(machine, remote_out, extra, max_bytes)
        for name in names:
            _copy_bounded(machine, f"{remote_out}/{name}", local / name, extra, max_bytes,
                          timeout_s)  # fmt: skip
        return local, sorted(local / name for name in names)
    except BaseException:
        shutil.rmtree(local, ignore_errors=True)
        raise


class RemoteResultRefused(RuntimeError):
    """Result files on a machine failed the checks; nothing of them was kept."""

    def __init__(self, host: str, problems: list[str]) -> None:
        super().__init__(f"result file(s) from {host} refused: {'; '.join(problems)}")


# One line per *.json entry: "f SIZE NAME" (regular file), "l NAME" (link), "o NAME" (other).
_LIST_SCRIPT = (
    'cd "$1" 2>/dev/null || exit 0; for f in *.json; do '
    'if [ -L "$f" ]; then echo "l $f"; elif [ -f "$f" ]; then echo "f $(wc -c < "$f") $f"; '
    'elif [ -e "$f" ]; then echo "o $f"; fi; done'
)


def _list_results(
    machine: Machine, remote_out: str, extra: Sequence[str] | None, max_bytes: int
) -> list[str]:
    """The names of REMOTE_OUT's result files, each checked (see fetch_results)."""
    command = f"sh -c {shlex.quote(_LIST_SCRIPT)} gpuplan-list {shlex.quote(remote_out)}"
    lines: list[str] = []

    def keep(line: str) -> None:
        if len(lines) <= MAX_RESULT_FILES:
            lines.append(line)

    run_remote(machine, command, "listing the result files", keep, timeout_s=120, extra=extra)
    names: list[str] = []
    problems: list[str] = []
    for line in lines:
        kind, _, rest = line.partition(" ")
        size_text, _, name = rest.partition(" ") if kind == "f" else ("", "", rest)
        shown = name[:80]
        if not RESULT_FILE_NAME.match(name):
            problems.append(f"{shown!r}: not a result file name (letters, digits, ._- then .json)")
        elif kind == "l":
            problems.append(f"{name}: a symbolic link; only regular files are fetched")
        elif kind != "f" or not size_text.isdigit():
            problems.append(f"{name}: not a regular file")
        elif int(size_text) > max_bytes:
            problems.append(f"{name}: {int(size_text):,} bytes; the limit is {max_bytes:,} bytes")
        else:
            names.append(name)
    if len(lines) > MAX_RESULT_FILES:
        problems.append(f"more than {MAX_RESULT_FILES} result files in one run's folder")
    if problems:
        raise RemoteResultRefused(machine.host or "this machine", problems)
    return names


def _copy_bounded(
    machine: Machine, remote_path: str, local_path: Path, extra: Sequence[str] | None,
    max_bytes: int, timeout_s: float,
) -> None:  # fmt: skip
    """`cat REMOTE_PATH` into LOCAL_PATH, stopped (and refused) past `max_bytes` bytes."""
    argv = ssh_command(machine, f"cat -- {shlex.quote(remote_path)}", extra)
    written = 0
    with _started(argv, timeout_s, subprocess.DEVNULL, subprocess.DEVNULL) as run:
        with local_path.open("wb") as handle:
            for chunk in run.chunks():
                written += len(chunk)
                if written > max_bytes:
                    break
                handle.write(chunk)
        if written <= max_bytes:
            run.proc.wait(timeout=max(1.0, timeout_s))  # at EOF: let ssh exit with its status
    code = run.proc.returncode
    name = local_path.name
    if written > max_bytes:
        raise RemoteResultRefused(
            machine.host or "this machine",
            [f"{name}: more than {max_bytes:,} bytes (it grew while being copied)"],
        )
    if code != 0:
        if code == SSH_FAILED:
            raise SshError(f"copying {name} from {machine.host}: ssh failed")
        raise RemoteResultRefused(
            machine.host or "this machine", [f"{name}: could not be read (cat exited {code})"]
        )
