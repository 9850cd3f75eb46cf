#!/usr/bin/env bash
# The standard gpuplan benchmark suite on the GPUs of this machine, within about 8 minutes.
#
#   tools/gpu_suite.sh              run it; result files go into $OUT (default ./results)
#   tools/gpu_suite.sh --dry-run    print the commands, run nothing
#   tools/gpu_suite.sh --cpu-smoke  the same steps on CPU with tiny sizes (checks the script)
#
# Steps: the operator benchmark first (ops: GEMM, attention and memory rates at every
# precision the GPU has, fp8 GEMMs included; at most SUITE_OPS_S, default 120 s, of the
# budget); resnet50 fp16/bf16 with --batch auto; bert-large fp16/bf16; gpt 124m/350m/1.3b
# bf16 with --compile; batch sweeps of resnet50 and bert-large fp16 (the step model's
# small-batch floor, tools/own_batch_sweeps.py); a world-size series over every GPU present
# (resnet50 bf16); last, the host cost of a sharded all-gather's per-tensor copies
# (tools/bench_slice_copies.py, a few seconds, into $OUT/slice_copies.txt). bf16 steps
# are skipped on GPUs without bf16 tensor cores. fp8 training: the harness has no fp8
# precision yet, so the suite says so on GPUs that have fp8 (compute capability >= 8.9).
# Each step gets what is left of the time budget (SUITE_BUDGET_S, default 480 s); steps that
# no longer fit are skipped and listed. Env: OUT, PYTHON (default python3), SUITE_GPUS
# (override the GPU count), SUITE_BUDGET_S, SUITE_OPS_S, SUITE_MAX_STEPS (run only the
# first N steps).
set -u -o pipefail

MODE=gpu
DRY_RUN=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    --cpu-smoke) MODE=cpu ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "error: unknown option $arg (valid: --dry-run, --cpu-smoke)" >&2; exit 2 ;;
  esac
done

OUT=${OUT:-./results}
PYTHON=${PYTHON:-python3}
BUDGET_S=${SUITE_BUDGET_S:-480}
OPS_S=${SUITE_OPS_S:-120}  # the ops step's share: its own bound (benchmarks.ops) + start-up
MIN_STEP_S=20  # a step with less time left than this is not started
cd "$(dirname "$0")/.." || exit 2
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD"

# Shell variables here never reuse a name the steps read from the environment: an exported CC
# (the C compiler torch.compile's Inductor builds with) must reach them unchanged.
probe() {  # GPU count, bf16 support, compute capability (major.minor)
  "$PYTHON" - <<'PY'
import torch
n = torch.cuda.device_count()
bf16 = n > 0 and torch.cuda.is_bf16_supported(including_emulation=False)
cc = ".".join(map(str, torch.cuda.get_device_capability(0))) if n else "0.0"
print(n, int(bf16), cc)
PY
}

if [ "$MODE" = cpu ]; then
  GPUS=${SUITE_GPUS:-2}; BF16=1; CAPABILITY=0.0
  COMMON=(--device cpu --steps 2 --warmup 1)
elif [ -n "${SUITE_GPUS:-}" ]; then
  GPUS=$SUITE_GPUS; BF16=1; CAPABILITY=${SUITE_CC:-9.0}
  COMMON=(--device cuda --steps 20 --warmup 5)
else
  read -r GPUS BF16 CAPABILITY < <(probe) || { echo "error: cannot import torch with $PYTHON" >&2; exit 2; }
  if [ "$GPUS" -lt 1 ]; then
    echo "error: no CUDA GPU visible; use --cpu-smoke to check the suite on CPU" >&2
    exit 2
  fi
  COMMON=(--device cuda --steps 20 --warmup 5)
fi

size() {  # the size to run: as given on a GPU, tiny in the CPU smoke test
  if [ "$MODE" = cpu ]; then echo tiny; else echo "$1"; fi
}
precision() {
  if [ "$MODE" = cpu ]; then echo fp32; else echo "$1"; fi
}

AUTO="--batch auto"  # CPU smoke: the default batch (auto would size it for this host's memory)
CNN_SWEEP="--batch 16,32,64,128"
BERT_SWEEP="--batch 4,8,32,64"
if [ "$MODE" = cpu ]; then AUTO="--batch 4"; CNN_SWEEP="--batch 2,4"; BERT_SWEEP="--batch 2,4"; fi

STEPS=()
add() {  # a step once (the CPU smoke test maps several GPU steps to the same one)
  local step
  for step in "${STEPS[@]}"; do [ "$step" = "$*" ] && return 0; done
  STEPS+=("$*")
}
add --workload ops --size "$(size full)"  # every precision the device has, small shapes on CPU
add --workload resnet50 --size "$(size full)" --precision "$(precision fp16)" $AUTO
[ "$BF16" = 1 ] && add --workload resnet50 --size "$(size full)" --precision "$(precision bf16)" $AUTO
add --workload bert --size "$(size large)" --precision "$(precision fp16)"
[ "$BF16" = 1 ] && add --workload bert --size "$(size large)" --precision "$(precision bf16)"
if [ "$BF16" = 1 ]; then
  COMPILE=--compile; [ "$MODE" = cpu ] && COMPILE=
  for s in 124m 350m 1.3b; do
    add --workload gpt --size "$(size $s)" --precision "$(precision bf16)" $COMPILE
  done
fi
add --workload resnet50 --size "$(size full)" --precision "$(precision fp16)" $CNN_SWEEP
add --workload bert --size "$(size large)" --precision "$(precision fp16)" $BERT_SWEEP
if [ "$GPUS" -gt 1 ]; then
  SERIES=1; n=2
  while [ "$n" -lt "$GPUS" ]; do SERIES="$SERIES,$n"; n=$((n * 2)); done
  SERIES="$SERIES,$GPUS"
  add --workload resnet50 --size "$(size full)" --precision "$(precision bf16)" --world-size "$SERIES"
fi

if [ -n "${SUITE_MAX_STEPS:-}" ]; then STEPS=("${STEPS[@]:0:$SUITE_MAX_STEPS}"); fi

echo "gpu_suite: mode $MODE, $GPUS device(s), bf16 $BF16, compute capability $CAPABILITY, budget ${BUDGET_S} s, results -> $OUT"
case "$CAPABILITY" in
  8.9|9.*|1[0-9].*) echo "gpu_suite: fp8: the ops step measures fp8 GEMMs; fp8 training skipped: the harness has no fp8 precision yet" ;;
esac

START=$SECONDS
FAILED=0
SKIPPED=()
for step in "${STEPS[@]}"; do
  # shellcheck disable=SC2086
  cmd=("$PYTHON" -m planner.cli.main bench run $step "${COMMON[@]}" --out "$OUT")
  if [ "$DRY_RUN" = 1 ]; then
    printf '%q ' "${cmd[@]}"; echo
    continue
  fi
  left=$((BUDGET_S - (SECONDS - START)))
  if [ "$left" -lt "$MIN_STEP_S" ]; then
    SKIPPED+=("$step")
    continue
  fi
  limit=$left
  case "$step" in --workload\ ops*) [ "$OPS_S" -lt "$left" ] && limit=$OPS_S ;; esac
  echo "gpu_suite: [$((SECONDS - START)) s] $step"
  timeout --signal=INT --kill-after=30 "$limit" "${cmd[@]}"
  code=$?
  if [ "$code" -ne 0 ]; then
    echo "gpu_suite: step failed (exit $code): $step" >&2
    FAILED=$((FAILED + 1))
  fi
done
# The host-overhead step: after the bench steps, unless SUITE_MAX_STEPS cut the list short.
SLICES=("$PYTHON" tools/bench_slice_copies.py --device "${COMMON[1]}")
if [ -z "${SUITE_MAX_STEPS:-}" ]; then
  if [ "$DRY_RUN" = 1 ]; then
    printf '%q ' "${SLICES[@]}"; echo
  elif [ $((BUDGET_S - (SECONDS - START))) -lt "$MIN_STEP_S" ]; then
    SKIPPED+=("tools/bench_slice_copies.py")
  else
    mkdir -p "$OUT"
    echo "gpu_suite: [$((SECONDS - START)) s] tools/bench_slice_copies.py"
    if ! timeout --kill-after=10 60 "${SLICES[@]}" > "$OUT/slice_copies.txt"; then
      echo "gpu_suite: step failed: tools/bench_slice_copies.py" >&2
      FAILED=$((FAILED + 1))
    fi
  fi
fi
[ "$DRY_RUN" = 1 ] && exit 0
for step in "${SKIPPED[@]}"; do echo "gpu_suite: skipped (out of time): $step"; done
echo "gpu_suite: done in $((SECONDS - START)) s; $FAILED step(s) failed, ${#SKIPPED[@]} skipped"
[ "$FAILED" -eq 0 ]
