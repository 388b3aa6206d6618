#!/bin/bash
# `make slurm-check`: the documented job array (evaluate_array.sbatch) on a real, single-node Slurm on localhost.
#
# Starts munged, slurmctld and slurmd (Debian's slurm-wlm and munge; installed with apt-get where missing, which
# needs root, as CI runs), each with its files in a fresh temporary folder and its own ports, and submits the array
# (CREPE_ARRAY_TASKS: one task a line) over the blind scorers and a fixture model on CREPE's released productivity
# text, on the CPU: each blind scorer on the selection SLURM_CHECK_SELECTION; the fixture model (a tiny, randomly
# initialised open_clip CLIP, seed 0, saved in open_clip's folder layout and loaded by its `local-dir:` name) on
# crepe-productivity at complexity 4 and on crepe-raw at complexity 4 (two folds of min(100, half the raw set)
# regions), its images synthetic (one picture of coloured blocks per image id of those files, made here: the real
# Visual Genome is not needed to check the array). It waits, checks that every task completed, merges the tasks'
# results (one results folder) and compares each summary.csv, byte for byte, with the same runs done in one process
# (the same command lines, one after another). The daemons it started are stopped on every exit, failure included.
#
#   bash docs/slurm/check.sh          # from the repository root; VPY (default .venv/bin/python), CREPE_DATA
#   SLURM_CHECK_SCORERS   the blind scorers, one task each (default "length negation wordfreq bigram": the
#                         classifier, about 70 s a run here whatever the selection, is left out to keep it short)
#   SLURM_CHECK_SELECTION their selection (default "--complexities 4 8 12"; empty: all of crepe-productivity)
#   SLURM_CHECK_FIXTURE=0 no fixture-model tasks;  SLURM_CHECK_WAIT  seconds to wait for the array (default 900)
#
# Exit status 0 and `slurm: N tasks, results identical`; otherwise one `error:` line naming what failed.
set -euo pipefail

VPY="${VPY:-.venv/bin/python}"
VPY="$(cd "$(dirname "$VPY")" && pwd)/$(basename "$VPY")"
ROOT="$(pwd)"
DATA="${CREPE_DATA:-data}/crepe"
read -r -a SCORERS <<< "${SLURM_CHECK_SCORERS:-length negation wordfreq bigram}"
BENCHMARK=crepe-productivity
SELECTION="${SLURM_CHECK_SELECTION---complexities 4 8 12}"
FIXTURE="${SLURM_CHECK_FIXTURE:-1}"
WAIT_S="${SLURM_CHECK_WAIT:-900}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/crepe-slurm-check.XXXXXX")"
STARTED=()

fail() { echo "error: slurm-check: $*" >&2; exit 1; }

stop() {
    local status=$?
    for ((i = ${#STARTED[@]} - 1; i >= 0; i--)); do      # slurmd, slurmctld, munged: the ones started here
        local pidfile="${STARTED[i]}"
        if [[ -s "$pidfile" ]]; then
            local pid; pid="$(cat "$pidfile")"
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
    done
    if [[ $status -ne 0 ]]; then
        echo "slurm-check: logs kept in $WORK" >&2
    else
        rm -rf "$WORK"
    fi
}
trap stop EXIT

[[ -d "$DATA" ]] || fail "no CREPE CSVs in $DATA: run \`make data-text\` first (or set CREPE_DATA)"

# --- Slurm and munge, from Debian's packages where missing
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    [[ "$(id -u)" -eq 0 ]] || fail "slurm-wlm and munge are not installed and this is not root: \
install them (apt-get install slurm-wlm munge) or run as root"
    echo "slurm-check: installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if ! { timeout 300 apt-get install -y -q slurm-wlm munge >"$WORK/apt.log" 2>&1 ||
           { timeout 300 apt-get update -q >>"$WORK/apt.log" 2>&1 &&
             timeout 600 apt-get install -y -q slurm-wlm munge >>"$WORK/apt.log" 2>&1; }; }; then
        fail "could not install slurm-wlm and munge from Debian's packages (no network to the mirrors?): see $WORK/apt.log"
    fi
fi
[[ "$(id -u)" -eq 0 ]] || fail "the single-node Slurm runs its daemons as root (as CI does); run as root"

# --- munge, with its own key and socket
mkdir -p "$WORK/munge" "$WORK/state" "$WORK/spool" "$WORK/array" "$WORK/single"
chmod 700 "$WORK/munge"
head -c 1024 /dev/urandom >"$WORK/munge/munge.key"
chmod 400 "$WORK/munge/munge.key"
SOCKET="$WORK/munge/munge.socket"
STARTED+=("$WORK/munge/munged.pid")
munged --force --key-file="$WORK/munge/munge.key" --socket="$SOCKET" --pid-file="$WORK/munge/munged.pid" \
    --log-file="$WORK/munge/munged.log" --seed-file="$WORK/munge/munged.seed" \
    || fail "munged did not start: see $WORK/munge/munged.log"

# --- a one-node cluster on free ports
port() { "$VPY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
HOST="$(hostname -s)"
CPUS="$(nproc)"
export SLURM_CONF="$WORK/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=crepecheck
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$(port)
SlurmdPort=$(port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCKET
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=3600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=2048 State=UNKNOWN
PartitionName=check Nodes=$HOST Default=YES MaxTime=60 State=UP
EOF
STARTED+=("$WORK/slurmctld.pid")
slurmctld -i || fail "slurmctld did not start: see $WORK/slurmctld.log"
STARTED+=("$WORK/slurmd.pid")
slurmd || fail "slurmd did not start: see $WORK/slurmd.log"
for _ in $(seq 60); do
    sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
    sleep 1
done
sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)' \
    || fail "the node did not come up in 60 s ($(sinfo -h -o '%t %E' 2>&1 | head -1)): see $WORK/slurmd.log"

# --- the grid, one task a line: the blind scorers, then the fixture model (made here, with its synthetic images)
DATA_ABS="$(cd "$DATA" && pwd)"
TASKS="$WORK/tasks.txt"
for scorer in "${SCORERS[@]}"; do
    echo "--model blind:$scorer --benchmark $BENCHMARK $SELECTION" >>"$TASKS"
done
if [[ "$FIXTURE" != 0 ]]; then
    "$VPY" - "$WORK/fixture-model" "$WORK/images" "$DATA_ABS" "$TASKS" <<'EOF' || fail "could not make the fixture model or its images"
import json, sys
from pathlib import Path

import numpy as np
import open_clip
import torch
from PIL import Image

from crepe_utils.benchmarks.crepe import queries as Q, raw

model_dir, image_dir, data, tasks = map(Path, sys.argv[1:])
# open_clip's smallest CLIP that keeps the stock tokenizer (77 tokens, 49,408 words), random weights, seed 0
cfg = {"embed_dim": 32,
       "vision_cfg": {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 16},
       "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}
model_dir.mkdir()
(model_dir / "open_clip_config.json").write_text(json.dumps({"model_cfg": cfg, "preprocess_cfg": {}}))
torch.manual_seed(0)
torch.save(open_clip.CLIP(**cfg).state_dict(), model_dir / "open_clip_pytorch_model.bin")
# one picture per image id of complexity 4's files, 640 x 600 (every released box starts inside it): 8 x 8 blocks
# of colour drawn from the id, so each image is its own and the same on every run
qs = Q.load_productivity(data, Q.PROD_HN_TYPES, (4,))
for image_id in sorted({q.image_id for q in qs.queries}, key=int):
    blocks = np.random.default_rng(int(image_id)).integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    path = image_dir / "VG_100K" / f"{image_id}.jpg"
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(blocks).resize((640, 600), Image.NEAREST).save(path, quality=90)
fold = min(100, len(raw.raw_sets(qs)[4]) // 2)
with open(tasks, "a") as fh:
    fh.write(f"--model local-dir:{model_dir} --benchmark crepe-productivity --complexities 4\n")
    fh.write(f"--model local-dir:{model_dir} --benchmark crepe-raw --complexities 4 --fold-size {fold} "
             "--max-folds 2\n")
EOF
fi
N="$(grep -c . "$TASKS")"
export CREPE_ARRAY_TASKS="$TASKS" CREPE_ARRAY_DATA_DIR="$DATA_ABS" VG_IMAGES="$WORK/images"
export CREPE_ARRAY_NO_CACHE=1 DEVICE=cpu KIND=fixture RESULTS="$WORK/array" VENV="$(dirname "$(dirname "$VPY")")"
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
JOB="$(sbatch --parsable --array=0-$((N - 1)) --gres=gpu:0 --cpus-per-task=1 --mem=1000M --time=30 \
       --output="$WORK/task-%a.log" --chdir="$ROOT" docs/slurm/evaluate_array.sbatch)" \
    || fail "sbatch refused the array: see $WORK/slurmctld.log"
JOB="${JOB%%;*}"
echo "slurm-check: array job $JOB, $N tasks:"
sed 's/^/  /' "$TASKS"

deadline=$((SECONDS + WAIT_S))
while squeue -h -j "$JOB" 2>/dev/null | grep -q .; do
    ((SECONDS < deadline)) || { scancel "$JOB" 2>/dev/null || true; fail "the array did not finish in $WAIT_S s"; }
    sleep 2
done

# --- every task completed, or nothing is merged
bad="$(scontrol -o show job "$JOB" 2>/dev/null | grep -v 'JobState=COMPLETED' | sed -E 's/.*ArrayTaskId=([0-9]+).*JobState=([A-Z_]+).*ExitCode=([0-9:]+).*/task \1 \2 (exit \3)/' || true)"
done_tasks="$(scontrol -o show job "$JOB" 2>/dev/null | grep -c 'JobState=COMPLETED' || true)"
if [[ -n "$bad" || "$done_tasks" -ne "$N" ]]; then
    first="$(echo "$bad" | head -1)"
    fail "${first:-only $done_tasks of $N tasks completed} of array job $JOB failed: nothing merged; see $WORK/task-*.log"
fi

# --- the same runs in one process: the tasks' command lines, one after another
# (their tables and progress go to single.log, kept with the other logs on failure)
"$VPY" - "$WORK/single" "$DATA_ABS" "$TASKS" >"$WORK/single.log" 2>&1 <<'EOF' \
    || fail "the one-process runs failed: $(grep -m1 '^error' "$WORK/single.log" || tail -1 "$WORK/single.log")"
import sys, warnings
from crepe_utils import cli
out, data, tasks = sys.argv[1:]
lines = [line.split() for line in open(tasks) if line.strip() and not line.lstrip().startswith("#")]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for words in lines:
        rc = cli.main(["evaluate", *words, "--device", "cpu", "--out", out, "--precision", "fp32", "--kind", "fixture",
                       "--data-dir", data, "--no-cache"])
        if rc != 0:
            sys.exit(f"error: slurm-check: the one-process run of `{' '.join(words)}` ended with status {rc}")
EOF

# --- merge and compare
"$VPY" - "$WORK/array" "$WORK/single" "$N" <<'EOF' || exit 1
import filecmp, sys
from pathlib import Path
from crepe_utils.results.store import load_results
array, single, n = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
found = sorted(p.relative_to(array) for p in array.rglob("summary.csv"))
alone = sorted(p.relative_to(single) for p in single.rglob("summary.csv"))
if len(found) != n or found != alone:
    sys.exit(f"error: slurm-check: the array wrote {len(found)} results, the one-process runs {len(alone)}, "
             f"{n} expected: {[str(p) for p in found]}")
merged = load_results(array)
differ = [str(p) for p in found if not filecmp.cmp(array / p, single / p, shallow=False)]
if differ:
    sys.exit(f"error: slurm-check: {len(differ)} summaries differ from the one-process runs: {', '.join(differ)}")
print(f"slurm-check: {len(merged)} summary rows merged from the {n} tasks' results")
print(f"slurm: {n} tasks, results identical")
EOF
