"""The dead-man switch: a startup script that ends the machine on its own.

It is scheduled at boot, before anything else, so it holds when the controller's laptop
crashes or loses its network. What "ends" means differs by cloud:

- AWS: instances launch with InstanceInitiatedShutdownBehavior=terminate, so powering off
  terminates the instance (and its delete-on-termination volumes): a transient systemd
  timer (`systemd-run --on-active=Nm`), else `shutdown -h +N` (no systemd), else a
  background sleep. The timer comes first because `shutdown -h +N` writes /run/nologin
  five minutes ahead, and pam_nologin then refuses every login but root's: the controller
  could not fetch its last runs' results. A transient timer does not survive a reboot,
  so the script also writes the deadline (first boot + N minutes, in seconds since the
  epoch) and a re-arm script run at every later boot (a systemd unit, else cron's
  @reboot) that arms the same switch for the time left, or powers off when none is.
  EC2 has no cloud-side run-time limit for on-demand instances; this switch is the limit.
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
DEAD_MAN_DIR = "/var/lib/gpuplan-dead-man"  # the deadline and the re-arm script
UNIT_DIR = "/etc/systemd/system"
REARM_UNIT = "gpuplan-dead-man-rearm.service"


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
    rearm = rearm_setup(minutes, sweep_id)
    return f"""#!/bin/sh
# gpuplan sweep {sweep_id}: dead-man switch. This machine powers off (and so terminates)
# {minutes} minutes after its first boot, whatever happens to the controller; a reboot
# re-arms it for the time left.
{rearm}systemd-run --on-active={minutes}m --unit=gpuplan-dead-man /sbin/poweroff \\
  || shutdown -h +{minutes} {reason} \\
  || (nohup sh -c 'sleep {minutes * 60}; poweroff' >/dev/null 2>&1 &)
"""


def rearm_setup(minutes: int, sweep_id: str) -> str:
    """Shell lines that keep the switch across reboots: the deadline (written once, at
    first boot), a re-arm script for the seconds left, run at every later boot.

    GPUPLAN_DEAD_MAN_DIR and GPUPLAN_DEAD_MAN_UNITS relocate the files (tests only).
    """
    reason = f'"gpuplan sweep {sweep_id}: max_minutes_per_target reached"'
    return f"""d=${{GPUPLAN_DEAD_MAN_DIR:-{DEAD_MAN_DIR}}}
u=${{GPUPLAN_DEAD_MAN_UNITS:-{UNIT_DIR}}}
mkdir -p "$d"
[ -s "$d/deadline" ] || echo $(( $(date +%s) + {minutes * 60} )) > "$d/deadline"
cat > "$d/rearm" <<'GPUPLAN_EOF'
#!/bin/sh
# gpuplan sweep {sweep_id}: re-arm the dead-man switch after a reboot, for the time left.
left=$(( $(cat "$(dirname "$0")/deadline") - $(date +%s) ))
[ "$left" -gt 0 ] || exec poweroff
systemd-run --on-active="$left"s --unit=gpuplan-dead-man /sbin/poweroff \\
  || shutdown -h +$(( (left + 59) / 60 )) {reason} \\
  || (nohup sh -c "sleep $left; poweroff" >/dev/null 2>&1 &)
GPUPLAN_EOF
chmod 755 "$d/rearm"
if [ -d "$u" ] && command -v systemctl >/dev/null 2>&1; then
  cat > "$u/{REARM_UNIT}" <<GPUPLAN_UNIT
[Unit]
Description=gpuplan sweep dead-man switch, re-armed at boot
[Service]
Type=oneshot
ExecStart=$d/rearm
[Install]
WantedBy=multi-user.target
GPUPLAN_UNIT
  systemctl enable {REARM_UNIT} >/dev/null 2>&1
else
  (crontab -l 2>/dev/null; echo "@reboot PATH=/usr/sbin:/sbin:/usr/bin:/bin $d/rearm") \\
    | crontab -
fi
"""
