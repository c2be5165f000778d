#!/usr/bin/env bash
# Prove the GPU path on one CUDA machine, in one step, in about 9 minutes, with no network:
#   1. build llama-cpp-python with CUDA for this machine's GPU only (from a local sdist),
#   2. `hanasu bench gpu`: random-weight Gemma 4 26B-A4B (real shapes, ~16 GB, written once)
#      -> cold/warm TTFT for 500/1,000/2,000-token persona prefixes, decode tok/s, tokens per
#      chunk, GPU memory, swa_full on/off, n_gpu_layers automatic vs all, and the partial-
#      offload candidate for 8-16 GB GPUs: all layers on the GPU with the MoE experts kept in
#      system RAM (-ot exps=CPU, tier gpu-experts-cpu),
#   3. the other 8-16 GB candidate, Gemma 4 E4B fully on the GPU (tier gpu-small; random
#      weights, real shapes, ~5 GB): step 2's and step 3's warm TTFT say which tier is faster
#      to the first word (SKIP_E4B=1 skips it),
#   4. one full `hanasu run` turn (spoken question in, spoken reply out) with the 26B model,
#   5. the production model (PRODUCTION_GGUF, or the downloaded one; skipped when absent) asked
#      to "set a timer for two minutes": passes when it calls set_timer with 120 s.
#
#   assets/packaging/gpu/prove-gpu.sh [OUT_DIR]      (repo root, Python env with Hanasu installed)
#
# Carry to the machine: this repo, its installed dependencies, and the llama-cpp-python sdist
# (WHEELHOUSE, default ./wheelhouse, filled beforehand on a networked machine with
#   pip download --no-binary :all: --no-deps llama-cpp-python==0.3.36 -d wheelhouse).
# Needs the CUDA toolkit (nvcc), cmake and a C++ compiler; 16 cores build it in ~3-4 min.
# A prebuilt CUDA wheel (abetlen's index, .../whl/cu12x) skips step 1: set SKIP_BUILD=1.
# Random weights say nothing about answer quality; the speed figures are honest.
set -euo pipefail

OUT="${1:-${OUT:-prove-gpu-out}}"
WHEELHOUSE="${WHEELHOUSE:-wheelhouse}"
LLAMA_VERSION="${LLAMA_VERSION:-0.3.36}"
mkdir -p "$OUT"
start=$(date +%s)
step() { echo "== [$(( $(date +%s) - start )) s] $*" | tee -a "$OUT/steps.log"; }

command -v nvidia-smi >/dev/null || { echo "prove-gpu: no nvidia-smi: not a CUDA machine" >&2; exit 1; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    step "building llama-cpp-python ${LLAMA_VERSION} with CUDA (native arch only)"
    command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || {
        echo "prove-gpu: nvcc not found; install the CUDA toolkit or set CUDACXX" >&2; exit 1; }
    CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=native" \
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
        timeout 300 pip install --force-reinstall --no-deps --no-index \
        --find-links "$WHEELHOUSE" "llama-cpp-python==${LLAMA_VERSION}" >"$OUT/build.log" 2>&1 \
        || { tail -30 "$OUT/build.log" >&2; exit 1; }
fi
python - <<'PY'
import llama_cpp
ok = bool(llama_cpp.llama_supports_gpu_offload())
print("llama_supports_gpu_offload:", ok)
raise SystemExit(0 if ok else "llama-cpp-python has no GPU offload: the build did not take")
PY

step "hanasu bench gpu (writes the random GGUF on first use)"
timeout 330 python -m app bench gpu --cache "${GGUF_CACHE:-$OUT}" --experts-on-cpu \
    --json "$OUT/bench-gpu.json" \
    | tee "$OUT/bench-gpu.txt"

if [ "${SKIP_E4B:-0}" != 1 ]; then
    step "hanasu bench gpu on Gemma 4 E4B fully on the GPU (the gpu-small tier)"
    E4B=$(python -c 'import sys; from pathlib import Path; from bench import gemma4_gguf
print(gemma4_gguf.cached(gemma4_gguf.E4B, Path(sys.argv[1])))' "${GGUF_CACHE:-$OUT}" | tail -1)
    timeout 150 python -m app bench gpu --gguf "$E4B" --prefixes 500,1000 \
        --json "$OUT/bench-gpu-e4b.json" | tee "$OUT/bench-gpu-e4b.txt"
fi

step "one hanasu run turn with the random-weight Gemma 4 on the GPU"
GGUF=$(ls "${GGUF_CACHE:-$OUT}"/gemma4-26b-a4b-random-v*.gguf | head -1)
python - "$OUT/question.wav" <<'PY'
import sys
from pathlib import Path
from app.adapters.file_audio import write_audio
from app.adapters.piper_tts import PiperSynthesizer
voice = PiperSynthesizer()
write_audio(Path(sys.argv[1]), voice.synthesize("What is the capital of France?"), voice.sample_rate)
PY
timeout 120 python -m app run --input "$OUT/question.wav" --output "$OUT/reply.wav" \
    --llm "$GGUF" --timeline "$OUT/run-timeline.json" | tee "$OUT/run.txt"
python - "$OUT/run-timeline.json" <<'PY'
import json, sys
turns = json.load(open(sys.argv[1]))["turns"]
assert turns and turns[0].get("first_sample_played"), "the turn produced no audio"
t = turns[0]
print("turn:", repr(t["transcript"]), "-> v2v", t["voice_to_voice"], "s (reply is noise: random weights)")
PY
step "the production model sets a timer (hanasu bench tools)"
if [ -n "${PRODUCTION_GGUF:-}" ]; then model_args=(--gguf "$PRODUCTION_GGUF"); else model_args=(--production); fi
timeout 240 python -m app bench tools --runs 5 "${model_args[@]}" --json "$OUT/bench-tools.json" \
    | tee "$OUT/bench-tools.txt" || echo "prove-gpu: the production model did not call set_timer" | tee -a "$OUT/steps.log"

step "done: figures in $OUT (bench-gpu.json, bench-gpu-e4b.json, run-timeline.json, bench-tools.json)"
