"""A real OpenSSH server on a free 127.0.0.1 port, with throwaway host and user keys.

`SshServer` starts /usr/sbin/sshd -D with its own config (keys, known_hosts, pid file
in a temporary folder), accepting only the generated user key for the current user.
Clients use `ssh_options` (its own ssh config file via -F, with UserKnownHostsFile set
to a file holding the server's host key and StrictHostKeyChecking=yes), so nothing in
~/.ssh is read or written. Fixtures: `sshd` (one server per test) and `sshd_factory`
(as many as a test needs). Used by the sweep tests and the cloud end-to-end tests.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.loopback import free_port

SSHD = "/usr/sbin/sshd"
START_TIMEOUT_S = 10.0


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuplan-test", "-f", str(path)],
        check=True,
        capture_output=True,
    )


class SshServer:
    """One sshd on 127.0.0.1:`port`; `alias` names it in the client config file."""

    def __init__(self, directory: Path, alias: str = "gpuplan-test-box") -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.alias = alias
        self.user = getpass.getuser()
        self.host = "127.0.0.1"
        self.port = 0
        self.host_key = self.dir / "host_ed25519"
        self.identity_file = self.dir / "user_ed25519"
        self.wrong_identity_file = self.dir / "other_ed25519"
        for key in (self.host_key, self.identity_file, self.wrong_identity_file):
            _keygen(key)
        (self.dir / "authorized_keys").write_text(
            Path(str(self.identity_file) + ".pub").read_text()
        )
        self.known_hosts = self.dir / "known_hosts"
        self.client_config = self.dir / "ssh_config"
        self.log = self.dir / "sshd.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def ssh_options(self) -> list[str]:
        """Client options: this server's config file (alias, known_hosts, strict checking)."""
        return ["-F", str(self.client_config)]

    def _write_configs(self) -> Path:
        config = self.dir / "sshd_config"
        config.write_text(
            f"Port {self.port}\n"
            "ListenAddress 127.0.0.1\n"
            f"HostKey {self.host_key}\n"
            f"PidFile {self.dir / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}\n"
            "PubkeyAuthentication yes\n"
            "PasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\n"
            "PermitRootLogin prohibit-password\n"
            "StrictModes no\n"
            "UsePAM no\n"
            "MaxStartups 50\n"
            "LogLevel ERROR\n"
            "Subsystem sftp internal-sftp\n"
        )
        host_key = Path(str(self.host_key) + ".pub").read_text().split()[:2]
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {' '.join(host_key)}\n")
        self.client_config.write_text(
            f"Host {self.alias}\n"
            "  HostName 127.0.0.1\n"
            f"  Port {self.port}\n"
            f"  User {self.user}\n"
            f"  IdentityFile {self.identity_file}\n"
            "Host *\n"
            f"  UserKnownHostsFile {self.known_hosts}\n"
            "  StrictHostKeyChecking yes\n"
            "  LogLevel ERROR\n"
        )
        return config

    def start(self) -> SshServer:
        """Start sshd (on a new free port the first time, the same port after a stop)."""
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation folder
        for _attempt in range(3):
            if not self.port or _attempt:
                self.port = free_port()
            config = self._write_configs()
            with self.log.open("ab") as log:
                self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=log)
            if self._wait_listening():
                return self
            self.stop()
        raise RuntimeError(f"sshd did not start; see {self.log}: {self.log.read_text()[-500:]}")

    def _wait_listening(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                return False
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        """Stop the listening sshd (sessions already open end when their client does)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def sshd_available() -> bool:
    return os.path.exists(SSHD) and shutil.which("ssh") is not None and os.geteuid() == 0


@pytest.fixture()
def sshd_factory(tmp_path: Path) -> Iterator[Any]:
    """Start as many loopback sshd servers as a test needs; all stopped afterwards."""
    if not sshd_available():
        pytest.skip("needs /usr/sbin/sshd, the ssh client, and root to run sshd")
    servers: list[SshServer] = []

    def start(alias: str = "gpuplan-test-box") -> SshServer:
        server = SshServer(tmp_path / f"sshd-{len(servers)}", alias).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture()
def sshd(sshd_factory: Any) -> SshServer:
    """One loopback sshd for this test."""
    return sshd_factory()  # type: ignore[no-any-return]
