# shellcheck shell=bash
# Shared by workflow/ci/start_slurm.sh and workflow/ci/stop_slurm.sh (sourced, not run).
#
# The CI cluster keeps everything it owns in one state folder (pids, logs, munge key and
# socket, slurmctld state). Only its slurm.conf lives in /etc/slurm, where every SLURM
# command finds it; the file carries MARK so that a real cluster's configuration is never
# overwritten.

STATE=${REJECTOPT_SLURM_STATE:-/tmp/rejectopt-slurm}
SLURM_CONF_PATH=/etc/slurm/slurm.conf
MARK="# Written by rejectopt workflow/ci/start_slurm.sh; single-node CI cluster, state in"
# shellcheck disable=SC2034  # used by start_slurm.sh
DAEMONS=(munged slurmctld slurmd)

log() { echo "$(basename "$0"): $*"; }
die() {
  echo "$(basename "$0"): ERROR: $*" >&2
  exit 1
}

# The pid recorded for daemon $1, if that process is alive and really is that daemon
# (a stale pid file, or a pid reused by another program, yields nothing).
daemon_pid() {
  local name=$1 file="$STATE/pids/$1.pid" pid
  [ -s "$file" ] || return 1
  pid=$(cat "$file")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] || return 1
  echo "$pid"
}

# Stop daemon $1 by its recorded pid: TERM, then KILL after 15 s. Forget the pid.
stop_daemon() {
  local name=$1 pid
  if pid=$(daemon_pid "$name"); then
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do
      if [ ! -d "/proc/$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != "$name" ]; then break; fi
      sleep 0.5
    done
    if [ -d "/proc/$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
      log "$name (pid $pid) ignored SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$STATE/pids/$name.pid"
}

# True if /etc/slurm/slurm.conf is ours (written by start_slurm.sh).
conf_is_ours() {
  [ -f "$SLURM_CONF_PATH" ] && head -n 1 "$SLURM_CONF_PATH" | grep -qF "$MARK"
}

# Cancel the jobs still in our cluster (a killed test may leave some behind). Only when our
# slurmctld runs, so that no other cluster is ever asked.
cancel_leftover_jobs() {
  local ids
  daemon_pid slurmctld >/dev/null && conf_is_ours || return 0
  ids=$(timeout -s KILL 20 squeue -h -o %A 2>/dev/null | tr '\n' ' ') || true
  [ -n "${ids// /}" ] || return 0
  log "cancelling leftover SLURM jobs: $ids"
  # shellcheck disable=SC2086
  timeout -s KILL 20 scancel $ids 2>/dev/null || true
  for _ in $(seq 1 20); do
    [ -z "$(timeout -s KILL 10 squeue -h -t PD,R,CG -o %A 2>/dev/null)" ] && return 0
    sleep 1
  done
  log "some jobs are still completing; going on"
}
