"""`gpuplan` with the aws backend replaced by FakeProvisioner (for subprocess tests).

Options come from the environment: FAKE_LOG (event log path), FAKE_HANG_S (seconds
wait_running blocks), FAKE_LAUNCH_DELAY_S (seconds launch returns after creating),
FAKE_CONFIRM_AFTER_S (seconds before a termination is confirmed; inf: never),
FAKE_SSH_PORT / FAKE_SSH_USER / FAKE_SSH_KEY (the loopback sshd).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from benchmarks.sweep.backends import register
from planner.cli.main import main
from tests.benchmarks.sweep.fakes import FakeProvisioner

fake = FakeProvisioner(
    log_path=os.environ["FAKE_LOG"],
    hang_s=float(os.environ.get("FAKE_HANG_S", "0")),
    launch_delay_s=float(os.environ.get("FAKE_LAUNCH_DELAY_S", "0")),
    confirm_after_s=float(os.environ.get("FAKE_CONFIRM_AFTER_S", "0")),
    port=int(os.environ.get("FAKE_SSH_PORT", "22")),
    user=os.environ.get("FAKE_SSH_USER"),
    identity_file=os.environ.get("FAKE_SSH_KEY"),
)
register("aws", lambda **_: fake)
if __name__ == "__main__":
    main()
