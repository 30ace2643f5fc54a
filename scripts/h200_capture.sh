#!/usr/bin/env bash
# One command for the device tool (issue 20): on the H200 machine, captures the JAX runs of
# tools/capture/jax_gpu.py, trims each file under 3 MiB, packs one archive per problem/fix group (the
# tool brings back at most 8 files, 2 folders deep) and prints what it wrote and our analyzer's verdict per run.
# Time: the capture stops starting runs after 200 s and is killed at 300 s; the analysis is cut at 90 s.
# From the repository root, with the device tool:  run(command="bash scripts/h200_capture.sh", timeout_s=480)
set -uo pipefail
: "${OUT:?OUT must name the folder to write into}"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
logdir=${LOGDIR:-/tmp/h200_logdir}
rm -rf "$logdir"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  "$PY" -c 'import jax, jaxlib, numpy; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, "numpy", numpy.__version__, jax.devices())'
  timeout 300 "$PY" -m tools.capture.jax_gpu "$logdir" --steps 20 --trim 3 --budget-s 200
  echo "capture exit status: $?"
} 2>&1 | tee "$OUT/capture.log"
for group in healthy input launch precision transfer; do
  runs=$(cd "$logdir" 2>/dev/null && ls -d "$group"* 2>/dev/null)
  extra=$([ "$group" = healthy ] && [ -f "$logdir/capture.json" ] && echo capture.json)
  # shellcheck disable=SC2086  # run names are plain words
  [ -n "$runs" ] && tar czf "$OUT/h200_$group.tgz" -C "$logdir" $runs $extra
done
timeout 90 bash -c '
  for run in "$1"/*/; do
    echo "== $(basename "$run")"
    "$2" -m tb_gpu_advisor analyze "$run" | sed -n "/^Verdict/,/^Time:/p;/^[0-9]\. \[/p"
  done' _ "$logdir" "$PY" 2>&1 | tee "$OUT/analyze.txt"
ls -l "$OUT"
grep -q "capture exit status: 0" "$OUT/capture.log"
