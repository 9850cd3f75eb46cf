"""A hostile or misbehaving remote, over a real loopback sshd (and the local backend).

A remote benchmark command ends with its whole process group, whether the limit passes
or the controller vanishes (kill -9, Ctrl-C), even when it ignores TERM; result files
are listed and checked before any copy and copied with a cap; what a remote prints is
held in bounded memory and made plain; ssh failures that cannot change fail at once.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runners import ssh
from benchmarks.runners.machine import Machine
from benchmarks.runners.remote_output import MAX_LINE_CHARS, TAIL_LINES
from benchmarks.safe_paths import MAX_RESULT_BYTES
from tests.benchmarks.sweep.conftest import ROOT
from tests.loopback import free_port
from tests.sshd import SshServer

PY = shlex.quote(sys.executable)
SUFFIX_CHARS = 40  # "… (N bytes cut)" after a line cut at MAX_LINE_CHARS
MAX_RSS_KB = 200 * 1024

# A remote process that ignores TERM, says its pid (atomically) and sleeps.
IGNORES_TERM = (
    "import os, signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "path = sys.argv[1]\n"
    "with open(path + '.tmp', 'w') as f:\n"
    "    f.write(str(os.getpid()))\n"
    "os.replace(path + '.tmp', path)\n"
    "time.sleep(300)\n"
)

# A controller process: runs one self-limiting remote command, holding its stdin.
CONTROLLER = (
    "import sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from benchmarks.runners import ssh\n"
    "from benchmarks.runners.machine import Machine\n"
    "machine = Machine('ssh', sys.argv[2])\n"
    "ssh.run_remote(machine, ssh.self_limiting(sys.argv[3], 300, kill_after_s=2), 'x',\n"
    "               hold_stdin=True, extra=sys.argv[4:])\n"
)

# Runs `what` (fetch or run) in a fresh process and reports its peak memory as JSON.
MEASURED = (
    "import json, sys\n"
    "sys.path.insert(0, sys.argv[1])\n"
    "from benchmarks.runners import ssh\n"
    "from benchmarks.runners.machine import Machine\n"
    "what, host, arg, extra = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]\n"
    "machine = Machine('ssh', host)\n"
    "report = {}\n"
    "try:\n"
    "    if what == 'fetch':\n"
    "        ssh.fetch_results(machine, arg, extra)\n"
    "    else:\n"
    "        report['tail'] = ssh.run_remote(machine, arg, 'x', extra=extra)\n"
    "except Exception as exc:\n"
    "    report['error'] = f'{type(exc).__name__}: {exc}'\n"
    # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's across exec).
    "status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "report['maxrss_kb'] = int(status)\n"
    "print(json.dumps(report))\n"
)


def q(value: object) -> str:
    return shlex.quote(str(value))


def ignores_term(pid_file: Path) -> str:
    """A remote shell command: a python that ignores TERM, its pid written to pid_file."""
    return f"{PY} -c {q(IGNORES_TERM)} {q(pid_file)}"


def is_gone(pid: int) -> bool:
    """No such process, or only a zombie left of it (dead, not yet reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def wait_until(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def wait_pid(pid_file: Path, timeout_s: float = 15.0) -> int:
    assert wait_until(pid_file.exists, timeout_s), f"{pid_file} never appeared"
    return int(pid_file.read_text())


def children(pid: int) -> list[int]:
    """The pids whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def pgid_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[2])


def limit_timers(pgid: int) -> list[int]:
    """Live pids of self_limiting's limit timer for the process group `pgid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            mine = b"gpuplan-limit" in args and str(pgid).encode() in args
            if mine and not is_gone(int(entry.name)):
                found.append(int(entry.name))
    return found


def ssh_box(sshd: SshServer) -> tuple[Machine, list[str]]:
    """The loopback sshd as a sweep target: its alias and the client options to use."""
    return Machine("ssh", sshd.alias), sshd.ssh_options


@pytest.fixture(autouse=True)
def _end_leftovers() -> Iterator[list[int]]:
    """Pids a test registers here are killed afterwards if still alive (never leak)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not is_gone(pid):
            os.kill(pid, signal.SIGKILL)


def run_self_limited(sshd: SshServer, command: str, limit_s: float) -> list[str]:
    """`command` run over ssh under ssh.self_limiting(limit_s); it must end within 10 s."""
    machine, extra = ssh_box(sshd)
    limited = ssh.self_limiting(command, limit_s, kill_after_s=1)
    started = time.monotonic()
    try:
        return ssh.run_remote(machine, limited, "x", timeout_s=30, extra=extra, hold_stdin=True)
    finally:
        assert time.monotonic() - started < 10


def assert_remote_ends(pid_file: Path, leftovers: list[int], within_s: float, what: str) -> None:
    """The pid written to pid_file is gone within `within_s` (leftovers end it otherwise)."""
    pid = wait_pid(pid_file, 1)
    leftovers.append(pid)
    assert wait_until(lambda: is_gone(pid), within_s), f"{what} pid {pid} still runs"


@pytest.fixture()
def fetch_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """fetch_results' temporary folders go here (empty at the start)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def fetch_folders(folder: Path) -> set[str]:
    return {p.name for p in folder.glob("gpuplan-fetch-*")}


@pytest.fixture(params=["ssh", "local"])
def box(request: pytest.FixtureRequest) -> tuple[Machine, list[str]]:
    """A machine to fetch from: the loopback sshd, or this machine (the local backend)."""
    if request.param == "local":
        return Machine(backend="local", host="localhost"), []
    return ssh_box(request.getfixturevalue("sshd"))


@pytest.fixture()
def remote_out(tmp_path: Path) -> Path:
    folder = tmp_path / "remote-out"
    folder.mkdir()
    return folder


@pytest.fixture()
def copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The remote paths fetch_results started copying."""
    started: list[str] = []
    real = ssh._copy_bounded

    def spy(machine: Machine, remote_path: str, *args: Any, **kwargs: Any) -> None:
        started.append(remote_path)
        real(machine, remote_path, *args, **kwargs)

    monkeypatch.setattr(ssh, "_copy_bounded", spy)
    return started


def run_measured(what: str, host: str, arg: str, extra: list[str], tmp: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, str(ROOT), what, host, arg, *extra],
        capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


# --- 1. a remote command ends with its whole group -----------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["kill -9", "SIGINT"])
def test_remote_group_ends_when_the_controller_dies_even_if_it_ignores_term(
    how: str, sshd: SshServer, tmp_path: Path, _end_leftovers: list[int]
) -> None:
    """A TERM-ignoring remote command and its limit timer end when the controller dies."""
    pid_file = tmp_path / "remote.pid"
    with (tmp_path / "controller.log").open("wb") as log:
        controller = subprocess.Popen(
            [sys.executable, "-c", CONTROLLER, str(ROOT), sshd.alias, ignores_term(pid_file),
             *sshd.ssh_options],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=ROOT,
        )  # fmt: skip
    group = 0
    try:
        remote = wait_pid(pid_file)
        _end_leftovers.append(remote)
        group = pgid_of(remote)
        assert limit_timers(group), "no limit timer runs for the remote command"
        clients = children(controller.pid)  # the ssh client (in a session of its own)
        _end_leftovers.extend(clients)
        assert clients, "the controller runs no ssh client"
        assert not is_gone(remote)
        controller.send_signal(signal.SIGKILL if how == "kill -9" else signal.SIGINT)
        controller.wait(timeout=15)
        assert wait_until(lambda: is_gone(remote), 15), f"remote pid {remote} survived ({how})"
        assert wait_until(lambda: all(is_gone(c) for c in clients), 15), "ssh client left"
        assert wait_until(lambda: not limit_timers(group), 5), "the limit timer was left"
    finally:
        if controller.poll() is None:
            controller.kill()
            controller.wait()
        for timer in limit_timers(group) if group else []:
            os.killpg(timer, signal.SIGKILL)  # its own group: the shell and its sleep


@pytest.mark.timeout(60)
def test_limit_ends_a_term_ignoring_remote_command(
    sshd: SshServer, tmp_path: Path, _end_leftovers: list[int]
) -> None:
    """At limit_s the command's group gets TERM, then KILL: a TERM-ignoring command ends."""
    pid_file = tmp_path / "remote.pid"
    with pytest.raises(ssh.RemoteCommandFailed):
        run_self_limited(sshd, ignores_term(pid_file), 3)
    assert_remote_ends(pid_file, _end_leftovers, 2, "past its limit, remote")


@pytest.mark.timeout(60)
def test_stray_term_ignoring_child_is_ended_when_the_command_ends(
    sshd: SshServer, tmp_path: Path, _end_leftovers: list[int]
) -> None:
    """A process the command leaves behind in its group is ended (TERM, then KILL) with it."""
    pid_file = tmp_path / "stray.pid"
    command = (
        f"{ignores_term(pid_file)} & while [ ! -s {q(pid_file)} ]; do sleep 0.1; done; echo started"
    )
    assert run_self_limited(sshd, command, 300) == ["started"]
    assert_remote_ends(pid_file, _end_leftovers, 5, "after its command, stray")


# --- 2. result files are checked before any copy --------------------------------------


@pytest.mark.timeout(60)
def test_oversize_result_is_refused_before_any_copy_and_leaves_no_temp_folder(
    box: tuple[Machine, list[str]], remote_out: Path, fetch_tmp: Path, copies: list[str]
) -> None:
    """A 1 GiB result file is refused at once, by its size, nothing copied or left behind."""
    machine, extra = box
    (remote_out / "ok.json").write_text("{}")
    with (remote_out / "big.json").open("wb") as handle:
        handle.truncate(1 << 30)  # sparse: no disk used
    started = time.monotonic()
    with pytest.raises(ssh.RemoteResultRefused) as refused:
        ssh.fetch_results(machine, str(remote_out), extra)
    assert time.monotonic() - started < 5
    message = str(refused.value)
    assert f"{1 << 30:,} bytes" in message and f"the limit is {MAX_RESULT_BYTES:,}" in message
    assert copies == []
    assert fetch_folders(fetch_tmp) == set()


@pytest.mark.timeout(60)
def test_oversize_result_fetch_holds_little_memory(sshd: SshServer, tmp_path: Path) -> None:
    """Refusing a 1 GiB result file over ssh keeps the controller's peak memory small."""
    remote_out = tmp_path / "remote-out"
    remote_out.mkdir()
    with (remote_out / "big.json").open("wb") as handle:
        handle.truncate(1 << 30)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    report = run_measured("fetch", sshd.alias, str(remote_out), sshd.ssh_options, tmp)
    assert report["error"].startswith("RemoteResultRefused") and "bytes" in report["error"]
    assert report["maxrss_kb"] < MAX_RSS_KB, report
    assert fetch_folders(tmp) == set()


@pytest.mark.timeout(60)
def test_copy_stops_at_the_limit_when_a_file_is_bigger_than_listed(
    box: tuple[Machine, list[str]], remote_out: Path, fetch_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The copy itself is capped: a file that grew after listing is refused, its folder removed."""
    machine, extra = box
    with (remote_out / "big.json").open("wb") as handle:
        handle.truncate(1 << 30)
    monkeypatch.setattr(ssh, "_list_results", lambda *args: ["big.json"])  # listed as small
    started = time.monotonic()
    with pytest.raises(ssh.RemoteResultRefused, match="grew while being copied"):
        ssh.fetch_results(machine, str(remote_out), extra)
    assert time.monotonic() - started < 10
    assert fetch_folders(fetch_tmp) == set()


@pytest.mark.timeout(60)
def test_result_link_to_dev_zero_is_refused(
    box: tuple[Machine, list[str]], remote_out: Path, fetch_tmp: Path, copies: list[str]
) -> None:
    """r.json -> /dev/zero is refused as a link, never read."""
    machine, extra = box
    (remote_out / "ok.json").write_text("{}")
    (remote_out / "r.json").symlink_to("/dev/zero")
    with pytest.raises(ssh.RemoteResultRefused, match=r"r\.json: a symbolic link"):
        ssh.fetch_results(machine, str(remote_out), extra)
    assert copies == []
    assert fetch_folders(fetch_tmp) == set()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_special_file_named_like_a_result_is_refused(
    kind: str, box: tuple[Machine, list[str]], remote_out: Path, fetch_tmp: Path,
    copies: list[str],
) -> None:  # fmt: skip
    """A FIFO or a folder named x.json is refused as not a regular file, never opened."""
    machine, extra = box
    (remote_out / "ok.json").write_text("{}")
    if kind == "fifo":
        os.mkfifo(remote_out / "x.json")
    else:
        (remote_out / "x.json").mkdir()
    with pytest.raises(ssh.RemoteResultRefused, match=r"x\.json: not a regular file"):
        ssh.fetch_results(machine, str(remote_out), extra)
    assert copies == []
    assert fetch_folders(fetch_tmp) == set()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", ["a b.json", "-x.json", "$(id).json", "x\ny.json", "é.json"])
def test_result_with_a_bad_name_is_refused(
    name: str, box: tuple[Machine, list[str]], remote_out: Path, fetch_tmp: Path,
    copies: list[str],
) -> None:  # fmt: skip
    """A file name outside letters, digits and ._- (then .json) is refused before any copy."""
    machine, extra = box
    (remote_out / "ok.json").write_text("{}")
    (remote_out / name).write_text("{}")
    with pytest.raises(ssh.RemoteResultRefused, match="not a result file name"):
        ssh.fetch_results(machine, str(remote_out), extra)
    assert copies == []
    assert fetch_folders(fetch_tmp) == set()


@pytest.mark.timeout(60)
def test_good_result_files_are_copied_byte_for_byte(
    box: tuple[Machine, list[str]], remote_out: Path, fetch_tmp: Path
) -> None:
    """Regular, well-named JSON files come back unchanged; other files are left alone."""
    machine, extra = box
    first = json.dumps({"name": "ünï\r\n\x1b[2J", "n": 1}, ensure_ascii=False).encode()
    second = b'{"a": [' + b"1, " * 200_000 + b"1]}"  # 600 kB: several read chunks
    (remote_out / "run-1.json").write_bytes(first)
    (remote_out / "run_2.v3.json").write_bytes(second)
    (remote_out / "notes.txt").write_text("not a result")
    folder, files = ssh.fetch_results(machine, str(remote_out), extra)
    try:
        assert folder.parent == fetch_tmp and folder.name.startswith("gpuplan-fetch-")
        assert [p.name for p in files] == ["run-1.json", "run_2.v3.json"]
        assert files[0].read_bytes() == first and files[1].read_bytes() == second
        assert sorted(p.name for p in folder.iterdir()) == ["run-1.json", "run_2.v3.json"]
    finally:
        shutil.rmtree(folder)


# --- 3. what a remote prints is bounded and plain --------------------------------------


@pytest.mark.timeout(120)
def test_300_mb_without_a_newline_holds_little_memory(sshd: SshServer, tmp_path: Path) -> None:
    """300 MB of output with no newline is read in bounded memory and kept as one cut line."""
    command = "head -c 300000000 /dev/zero | tr '\\0' a"
    report = run_measured("run", sshd.alias, command, sshd.ssh_options, tmp_path)
    assert "error" not in report, report
    (line,) = report["tail"]
    assert "bytes cut" in line and len(line) <= MAX_LINE_CHARS + SUFFIX_CHARS
    assert line.startswith("a" * MAX_LINE_CHARS)
    assert report["maxrss_kb"] < MAX_RSS_KB, report


@pytest.mark.timeout(60)
def test_huge_lines_are_cut_and_only_a_tail_is_kept(sshd: SshServer) -> None:
    """Lines of 5 MB are cut at MAX_LINE_CHARS; only the last TAIL_LINES lines are kept."""
    machine, extra = ssh_box(sshd)
    command = "for i in $(seq 22); do head -c 5000000 /dev/zero | tr '\\0' b; echo; done"
    seen: list[str] = []
    tail = ssh.run_remote(machine, command, "x", seen.append, extra=extra)
    assert len(seen) == 22 and len(tail) == TAIL_LINES == 20
    for line in seen:
        assert len(line) <= MAX_LINE_CHARS + SUFFIX_CHARS
        assert line.startswith("b" * MAX_LINE_CHARS) and "bytes cut" in line


@pytest.mark.timeout(60)
def test_escape_sequences_never_reach_the_lines(sshd: SshServer) -> None:
    """Terminal escapes (title, clipboard, clear screen, colour) and controls are stripped."""
    machine, extra = ssh_box(sshd)
    command = (
        "printf '\\033]0;pwned\\007\\033]52;c;ZXZpbA==\\007\\033[2J\\033[31mred\\033[0m"
        "\\rnext\\n\\033P1$qm\\033\\\\\\233Hend\\n'"
    )
    seen: list[str] = []
    tail = ssh.run_remote(machine, command, "x", seen.append, extra=extra)
    assert tail == seen
    text = "\n".join(seen)
    assert "red" in text and "next" in text and "end" in text
    for bad in ("\x1b", "\x07", "\x9b", "pwned", "ZXZpbA=="):
        assert bad not in text, (bad, seen)
    assert all(ch.isprintable() for ch in text.replace("\n", "")), seen


@pytest.mark.timeout(60)
def test_failure_message_of_a_loud_command_is_bounded(sshd: SshServer) -> None:
    """RemoteCommandFailed from a command that printed 30 MB holds a short, bounded tail."""
    machine, extra = ssh_box(sshd)
    command = "for i in $(seq 30); do head -c 1000000 /dev/zero | tr '\\0' c; echo; done; exit 3"
    with pytest.raises(ssh.RemoteCommandFailed) as failed:
        ssh.run_remote(machine, command, "loud", extra=extra)
    assert failed.value.code == 3
    assert len(failed.value.tail) <= TAIL_LINES
    assert len(str(failed.value)) < 30_000


# --- 4. ssh failures that cannot change fail at once -----------------------------------


@pytest.mark.timeout(60)
def test_unknown_host_name_fails_at_once(tmp_path: Path) -> None:
    """wait_for_ssh gives up on a host name that cannot resolve at once, not after timeout_s."""
    extra = ["-F", os.devnull, "-o", f"UserKnownHostsFile={tmp_path / 'known_hosts'}"]
    started = time.monotonic()
    with pytest.raises(ssh.SshError, match="unknown host name"):
        ssh.wait_for_ssh(Machine("ssh", "no-such-host.invalid"), 600, poll_s=1, extra=extra)
    assert time.monotonic() - started < 20


@pytest.mark.timeout(60)
def test_refused_key_fails_at_once(sshd: SshServer) -> None:
    """wait_for_ssh gives up at once when the server refuses the key."""
    machine = Machine(
        "ssh", sshd.host, user=sshd.user, port=sshd.port,
        identity_file=str(sshd.wrong_identity_file),
    )  # fmt: skip
    started = time.monotonic()
    with pytest.raises(ssh.SshError, match="Permission denied"):
        ssh.wait_for_ssh(machine, 600, poll_s=1, extra=sshd.ssh_options)
    assert time.monotonic() - started < 20


@pytest.mark.timeout(60)
def test_machine_not_listening_yet_is_waited_for(tmp_path: Path) -> None:
    """A refused connection (sshd not up yet) is retried until timeout_s, then said."""
    port = free_port()
    extra = ["-F", os.devnull, "-o", f"UserKnownHostsFile={tmp_path / 'known_hosts'}"]
    started = time.monotonic()
    with pytest.raises(ssh.SshError, match="waited 2 s for ssh"):
        ssh.wait_for_ssh(Machine("ssh", "127.0.0.1", port=port), 2, poll_s=0.5, extra=extra)
    assert 1.5 <= time.monotonic() - started < 20


# --- 5. install's steps end within their limits ----------------------------------------


@pytest.mark.timeout(60)
def test_hanging_import_check_ends_at_its_limit(
    sshd: SshServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _end_leftovers: list[int]
) -> None:
    """An import check that hangs fails at its step limit, the remote process ended."""
    pid_file = tmp_path / "python.pid"
    python = tmp_path / "python"
    python.write_text(
        f"#!/bin/sh\necho $$ > {q(pid_file)}.tmp && mv {q(pid_file)}.tmp {q(pid_file)}\n"
        "exec sleep 300\n"
    )
    python.chmod(0o755)
    monkeypatch.setattr(
        ssh, "STEP_LIMIT_S", {"mkdir": 5, "wheel copy": 5, "pip install": 5, "import check": 3}
    )
    machine, extra = ssh_box(sshd)
    started = time.monotonic()
    with pytest.raises(ssh.RemoteCommandFailed):
        ssh.install(machine, str(tmp_path / "root"), None, str(python), extra=extra)
    assert time.monotonic() - started < 20
    assert_remote_ends(pid_file, _end_leftovers, 2, "import check")
