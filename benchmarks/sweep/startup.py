"""The dead-man switch: a startup script that ends the machine on its own.

It is scheduled at boot, before anything else, so it holds when the controller's laptop
crashes or loses its network. What "ends" means differs by cloud:

- AWS: instances launch with InstanceInitiatedShutdownBehavior=terminate, so powering off
  terminates the instance (and its delete-on-termination volumes): a transient systemd
  timer (`systemd-run --on-active=Nm`), else `shutdown -h +N` (no systemd), else a
  background sleep. The timer comes first because `shutdown -h +N` writes /run/nologin
  five minutes ahead, and pam_nologin then refuses every login but root's: the controller
  could not fetch its last runs' results.
- GCP: powering off only *stops* a Compute Engine instance; its boot disk stays billed.
  So at N minutes the script deletes its own instance (`gcloud compute instances delete`,
  name and zone from the metadata server), which works when the instance runs as a
  service account allowed to delete instances; when that fails (gpuplan attaches no
  service account, so by default it does) it powers off, and a second timer powers off
  at N+3 minutes in case gcloud hangs. The instance's own `scheduling.maxRunDuration` with
  `instanceTerminationAction=DELETE` is the backstop that always deletes: Compute Engine
  enforces it without the machine's help, counted from when the VM started running, so
  it normally acts first, a little before this switch (counted from boot).
"""

from __future__ import annotations

import math

SELF_DELETE_PATH = "/run/gpuplan-dead-man"
GCLOUD_TIMEOUT_S = 120


def gcp_self_delete_script(sweep_id: str) -> str:
    """The GCP switch's action: delete this instance through gcloud, else power off."""
    return f"""#!/bin/sh
# gpuplan sweep {sweep_id}: delete this instance (stopping it would keep its disk billed).
md=http://metadata.google.internal/computeMetadata/v1/instance
name=$(curl -sf -H 'Metadata-Flavor: Google' "$md/name") \\
  && zone=$(curl -sf -H 'Metadata-Flavor: Google' "$md/zone") \\
  && timeout {GCLOUD_TIMEOUT_S} gcloud compute instances delete "$name" \\
       --zone "${{zone##*/}}" --quiet
# Not deleted (no service account allowed to, no gcloud): power off, i.e. stop.
poweroff
"""


def dead_man_script(max_minutes: float, sweep_id: str, cloud: str | None = None) -> str:
    """A shell startup script that ends the machine after `max_minutes` (rounded up):
    GCP (`cloud="gcp"`): deletes the instance, falling back to power-off; else powers off."""
    minutes = max(1, math.ceil(max_minutes))
    reason = f'"gpuplan sweep {sweep_id}: max_minutes_per_target reached"'
    if cloud == "gcp":
        action = gcp_self_delete_script(sweep_id)
        return f"""#!/bin/sh
# gpuplan sweep {sweep_id}: dead-man switch. {minutes} minutes after boot this instance
# deletes itself (gcloud, when its service account may), else powers off (stopped).
cat > {SELF_DELETE_PATH} <<'GPUPLAN_EOF'
{action}GPUPLAN_EOF
chmod 755 {SELF_DELETE_PATH}
systemd-run --on-active={minutes}m --unit=gpuplan-dead-man {SELF_DELETE_PATH} \\
  || (nohup sh -c 'sleep {minutes * 60}; {SELF_DELETE_PATH}' >/dev/null 2>&1 &)
systemd-run --on-active={minutes + 3}m --unit=gpuplan-power-off /sbin/poweroff \\
  || shutdown -h +{minutes + 3} {reason} \\
  || (nohup sh -c 'sleep {(minutes + 3) * 60}; poweroff' >/dev/null 2>&1 &)
"""
    return f"""#!/bin/sh
# gpuplan sweep {sweep_id}: dead-man switch. This machine powers off (and so terminates)
# {minutes} minutes after boot, whatever happens to the controller.
systemd-run --on-active={minutes}m --unit=gpuplan-dead-man /sbin/poweroff \\
  || shutdown -h +{minutes} {reason} \\
  || (nohup sh -c 'sleep {minutes * 60}; poweroff' >/dev/null 2>&1 &)
"""
