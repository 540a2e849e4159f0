#!/usr/bin/env bash
# Stop the CI cluster started by workflow/ci/start_slurm.sh: cancel its leftover jobs, then
# stop slurmd, slurmctld and munged by the pids it recorded (never by name). Safe to run
# twice, or when nothing was started. Keeps the state folder (logs) and /etc/slurm/slurm.conf.
set -uo pipefail

if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  exec sudo -n --preserve-env=REJECTOPT_SLURM_STATE bash "$0" "$@"
fi

# shellcheck source=workflow/ci/slurm_common.sh
source "$(dirname "$0")/slurm_common.sh"
[ -d "$STATE/pids" ] || { log "nothing to stop ($STATE/pids does not exist)"; exit 0; }

cancel_leftover_jobs
for name in slurmd slurmctld munged; do stop_daemon "$name"; done
log "stopped"
