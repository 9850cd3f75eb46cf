"""The dead-man switch: a startup script that powers the machine off on its own.

Cloud machines launch with shutdown = terminate (AWS InstanceInitiatedShutdownBehavior,
GCP instanceTerminationAction=DELETE with maxRunDuration), so powering off ends the
bill. The script schedules that at boot, before anything else, so it holds when the
controller's laptop crashes or loses its network: `shutdown -h +N` (sysvinit and
systemd), else a transient systemd timer, else a background sleep.
"""

from __future__ import annotations

import math


def dead_man_script(max_minutes: float, sweep_id: str) -> str:
    """A shell startup script that powers off after `max_minutes` (rounded up)."""
    minutes = max(1, math.ceil(max_minutes))
    return f"""#!/bin/sh
# gpuplan sweep {sweep_id}: dead-man switch. This machine powers off (and so terminates)
# {minutes} minutes after boot, whatever happens to the controller.
shutdown -h +{minutes} "gpuplan sweep {sweep_id}: max_minutes_per_target reached" \\
  || systemd-run --on-active={minutes}m --unit=gpuplan-dead-man /sbin/poweroff \\
  || (nohup sh -c 'sleep {minutes * 60}; poweroff' >/dev/null 2>&1 &)
"""
