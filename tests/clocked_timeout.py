"""coreutils' `timeout` with a controlled clock, for tests of scripts that bound their steps.

    python tests/clocked_timeout.py [--signal=SIG] [--kill-after=S] LIMIT COMMAND...

It appends its arguments (NUL-separated, one call a line) to $TIMEOUT_LOG, runs COMMAND
with its stderr passed through, and takes LIMIT as run out once COMMAND is measuring: once
it has drawn a progress bar (rich's bar character), which a benchmark run draws only inside
its timed loop. Whatever the machine's load, the signal lands at that point. Then it does
what `timeout` does: sends SIG (default TERM), KILL after --kill-after seconds if the
command is still there, and exits 124; a command that ends first gives its own status.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

BAR = "\u2501".encode()  # rich's progress bar


def main(args: list[str]) -> int:
    with open(os.environ["TIMEOUT_LOG"], "a") as log:
        log.write("\0".join(args) + "\n")
    options = {}
    while args[0].startswith("--"):
        key, _, value = args.pop(0)[2:].partition("=")
        options[key] = value
    step = subprocess.Popen(args[1:], stderr=subprocess.PIPE)
    assert step.stderr is not None
    seen, killer = b"", None
    while chunk := os.read(step.stderr.fileno(), 65536):
        os.write(2, chunk)
        if killer is None and BAR in (seen := seen[-8:] + chunk):
            step.send_signal(signal.Signals["SIG" + options.get("signal", "TERM")])
            killer = threading.Timer(float(options.get("kill-after", "600")), step.kill)
            killer.start()
    code = step.wait()
    if killer is None:
        return code
    killer.cancel()
    return 124


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
