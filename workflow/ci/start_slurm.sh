#!/usr/bin/env bash
# Start a real single-node SLURM cluster on this machine, for tests/test_slurm.py.
#
#   bash workflow/ci/start_slurm.sh     # .ci/run does this, then exports REJECTOPT_SLURM=1
#   bash workflow/ci/stop_slurm.sh      # stops every daemon started here, by its pid
#
# Installs Debian's slurm-wlm and munge if missing, writes /etc/slurm/slurm.conf for this
# machine (hostname, CPUs and memory read now), starts munged, slurmctld and slurmd directly
# (no systemd) and waits until the node is idle and a one-task job runs. No accounting
# (no slurmdbd): sacct does not work, so Snakemake must poll with squeue, which is what
# workflow/ci/slurm-profile sets.
#
# Idempotent: if the daemons of an earlier run are still up with the same configuration they
# are reused; stale pid files or a changed configuration make it
# stop what is left of them and start afresh. Jobs left in the queue by a killed run are
# cancelled. Needs root (or password-less sudo).
# State (pids, logs, munge key/socket, slurmctld state): $REJECTOPT_SLURM_STATE,
# default /tmp/rejectopt-slurm.
set -euo pipefail

if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    exec sudo -n --preserve-env=REJECTOPT_SLURM_STATE bash "$0" "$@"
  fi
  echo "start_slurm.sh: ERROR: needs root (or password-less sudo) to install and run SLURM" >&2
  exit 1
fi

# shellcheck source=workflow/ci/slurm_common.sh
source "$(dirname "$0")/slurm_common.sh"
start=$(date +%s)

# --- 1. packages ------------------------------------------------------------------------
missing=()
for tool in munged munge unmunge slurmctld slurmd sinfo sbatch squeue scontrol scancel srun; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
mkdir -p "$STATE"/{pids,log,munge,ctld,spool}
chmod 700 "$STATE/munge"
if [ ${#missing[@]} -gt 0 ]; then
  log "installing slurm-wlm and munge (missing: ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge; } \
    >"$STATE/log/apt.log" 2>&1 || { tail -n 20 "$STATE/log/apt.log" >&2; die "apt-get install of slurm-wlm munge failed (log: $STATE/log/apt.log)"; }
  log "installed in $(($(date +%s) - start)) s: $(slurmctld -V)"
fi

# --- 2. configuration for this machine --------------------------------------------------
host=$(hostname -s)
cpus=$(nproc)
mem_total_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024))
# A bit below the total: SLURM drains a node whose RealMemory exceeds what slurmd finds.
real_mem=$((mem_total_mb * 9 / 10))
conf_new="$STATE/slurm.conf"
cat >"$conf_new.tmp" <<EOF
$MARK $STATE
ClusterName=rejectopt-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$STATE/munge/munge.socket
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/ctld/slurmctld.pid
SlurmdPidFile=$STATE/spool/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
# Finished jobs stay visible to squeue for 5 minutes; the Snakemake plugin polls with squeue
# only if MinJobAge >= 3 x its first status-check delay.
MinJobAge=300
SlurmdTimeout=60
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$real_mem State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
mv "$conf_new.tmp" "$conf_new"

if [ -f "$SLURM_CONF_PATH" ] && ! conf_is_ours; then
  die "$SLURM_CONF_PATH exists and was not written by this script; refusing to overwrite a real cluster's configuration"
fi
conf_changed=1
if conf_is_ours && cmp -s "$conf_new" "$SLURM_CONF_PATH"; then conf_changed=0; fi

# --- 3. reuse a healthy cluster of an earlier run, or clean up what is left of it -----------
healthy() {
  local name
  for name in "${DAEMONS[@]}"; do daemon_pid "$name" >/dev/null || return 1; done
  timeout -s KILL 10 scontrol ping 2>/dev/null | grep -q UP || return 1
  case "$(timeout -s KILL 10 sinfo -h -N -n "$host" -o %t 2>/dev/null)" in
    idle | mix | alloc | comp) return 0 ;;
    *) return 1 ;;
  esac
}
if [ "$conf_changed" = 0 ] && healthy; then
  log "reusing the running cluster (munged $(daemon_pid munged), slurmctld $(daemon_pid slurmctld), slurmd $(daemon_pid slurmd))"
else
  for name in slurmd slurmctld munged; do stop_daemon "$name"; done
  # Anything else bound to SLURM's ports is not ours: say so instead of failing obscurely.
  for port in 6817 6818; do
    if command -v ss >/dev/null && ss -Hltn "sport = :$port" | grep -q .; then
      die "port $port is in use by a process this script did not start: $(ss -Hltnp "sport = :$port")"
    fi
  done
  cp "$conf_new" "$SLURM_CONF_PATH.tmp" && mv "$SLURM_CONF_PATH.tmp" "$SLURM_CONF_PATH"

  # --- 4. munged: its own key and socket in the state folder -------------------------------
  if [ ! -s "$STATE/munge/munge.key" ]; then
    dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none
  fi
  chmod 400 "$STATE/munge/munge.key"
  rm -f "$STATE/munge/munge.socket" "$STATE/munge/munge.socket.lock" "$STATE/munge/munged.pid"
  # Foreground daemons in their own session: $! is the daemon's pid, and a Ctrl-C or a
  # timeout killing the caller's process group leaves them for stop_slurm.sh.
  setsid munged -F --force --socket="$STATE/munge/munge.socket" --key-file="$STATE/munge/munge.key" \
    --pid-file="$STATE/munge/munged.pid" --log-file="$STATE/log/munged.log" \
    --seed-file="$STATE/munge/munged.seed" </dev/null >>"$STATE/log/munged.out" 2>&1 &
  echo $! >"$STATE/pids/munged.pid"
  for _ in $(seq 1 40); do
    munge -S "$STATE/munge/munge.socket" -n 2>/dev/null | unmunge -S "$STATE/munge/munge.socket" >/dev/null 2>&1 && break
    daemon_pid munged >/dev/null || { tail -n 20 "$STATE/log/munged.log" "$STATE/log/munged.out" >&2 || true; die "munged exited"; }
    sleep 0.25
  done
  munge -S "$STATE/munge/munge.socket" -n | unmunge -S "$STATE/munge/munge.socket" >/dev/null ||
    die "munged does not answer on $STATE/munge/munge.socket"
  log "munged up (pid $(daemon_pid munged))"

  # --- 5. slurmctld, then slurmd ------------------------------------------------------------
  # A clean cluster: the saved state of an earlier controller (killed, or stopped with jobs
  # left) would bring its jobs back, holding the node's CPUs for minutes. Job ids restart at
  # 1, so the earlier logs are set aside (tests/test_slurm.py looks job ids up in
  # slurmctld.log). Job steps of a killed earlier cluster may still run; with slurmd's spool
  # cleared too, the new daemons do not know them.
  rm -rf "${STATE:?}/ctld" "${STATE:?}/spool"
  mkdir -p "$STATE/ctld" "$STATE/spool"
  for f in slurmctld.log slurmd.log; do
    if [ -f "$STATE/log/$f" ]; then mv "$STATE/log/$f" "$STATE/log/$f.prev"; fi
  done
  setsid slurmctld -D -i </dev/null >>"$STATE/log/slurmctld.out" 2>&1 &
  echo $! >"$STATE/pids/slurmctld.pid"
  for _ in $(seq 1 60); do
    timeout -s KILL 10 scontrol ping 2>/dev/null | grep -q UP && break
    daemon_pid slurmctld >/dev/null || { tail -n 30 "$STATE/log/slurmctld.log" "$STATE/log/slurmctld.out" >&2 || true; die "slurmctld exited"; }
    sleep 0.5
  done
  timeout -s KILL 10 scontrol ping | grep -q UP || die "slurmctld does not answer (log: $STATE/log/slurmctld.log)"
  log "slurmctld up (pid $(daemon_pid slurmctld))"
  setsid slurmd -D </dev/null >>"$STATE/log/slurmd.out" 2>&1 &
  echo $! >"$STATE/pids/slurmd.pid"
fi

# --- 6. cancel jobs an earlier (killed) run left behind; wait until the node is idle -------
cancel_leftover_jobs
state=""
for _ in $(seq 1 480); do
  state=$(timeout -s KILL 10 sinfo -h -N -n "$host" -o %t 2>/dev/null || true)
  case "$state" in
    idle) break ;;
    drain* | down | drng)
      # e.g. left drained by an earlier run; slurmd is registered and healthy now
      timeout -s KILL 10 scontrol update NodeName="$host" State=RESUME 2>/dev/null || true ;;
  esac
  daemon_pid slurmd >/dev/null || { tail -n 30 "$STATE/log/slurmd.log" "$STATE/log/slurmd.out" >&2 || true; die "slurmd exited"; }
  sleep 0.5
done
if [ "$state" != idle ]; then
  timeout -s KILL 10 sinfo -N -l >&2 || true
  timeout -s KILL 10 squeue >&2 || true
  tail -n 30 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
  die "node $host is '$state', not idle, after 240 s"
fi
log "node $host: $state ($cpus CPUs, RealMemory=$real_mem MB)"
smoke=$(timeout -s KILL 120 srun --quiet -N 1 -n 1 -t 2 --mem=100 hostname 2>&1) ||
  die "a one-task job did not run: $smoke"
[ "$smoke" = "$(hostname)" ] || [ "$smoke" = "$host" ] || die "unexpected output of a one-task job: $smoke"
log "SLURM $(sinfo -V | awk '{print $2}') ready in $(($(date +%s) - start)) s (state: $STATE)"
