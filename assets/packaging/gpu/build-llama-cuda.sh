#!/usr/bin/env bash
# Rebuild llama-cpp-python with CUDA, then freeze Hanasu with it (an NVIDIA GPU build).
#
#   assets/packaging/gpu/build-llama-cuda.sh            (from the repo root, in the build venv)
#
# Needs the CUDA toolkit (nvcc on PATH or CUDACXX set) and cmake. The build compiles llama.cpp
# from the sdist: about 5 minutes on two cores for the CPU build, several times that with CUDA
# kernels; CMAKE_CUDA_ARCHITECTURES picks the GPU generations compiled for (fewer = faster).
#
# How the frozen app then uses the GPU (app/adapters/llama_llm.py, nothing to configure):
#   * PyInstaller's hook (assets/packaging/pyinstaller/hooks/hook-llama_cpp.py) collects every
#     library in llama_cpp/lib, including libggml-cuda.so; the binary dependency scan adds the
#     CUDA runtime and cuBLAS libraries it links (several hundred MB). The NVIDIA driver
#     (libcuda.so.1) is never bundled: it must come from the user's system.
#   * At load, n_gpu_layers is automatic: when llama_cpp.llama_supports_gpu_offload() is true it
#     offloads all layers (-1) if the GGUF plus ~1.5 GB fits the free VRAM reported by
#     nvidia-smi, otherwise the share of layers that fits; a CPU-only build uses 0.
#     `hanasu --self-test` prints which build it got on its "gpu" line.
#   * faster-whisper/CTranslate2 pick CUDA on their own when a device is visible (their PyPI
#     wheels include CUDA support; cuDNN/cuBLAS 12 must be installed for them).
set -euo pipefail

LLAMA_VERSION="${LLAMA_VERSION:-0.3.36}"
# Turing, Ampere (A100, RTX 30), Ada (RTX 40), Hopper; "native" = only the GPU in this machine.
CUDA_ARCHS="${CMAKE_CUDA_ARCHITECTURES:-75;80;86;89;90}"

command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || {
    echo "build-llama-cuda: nvcc not found; install the CUDA toolkit or set CUDACXX" >&2; exit 1; }

# GGML_NATIVE=OFF: do not tune the CPU code for this build machine (users' CPUs differ).
CMAKE_ARGS="-DGGML_CUDA=on -DGGML_NATIVE=OFF -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS}" \
    pip install --force-reinstall --no-cache-dir --no-deps "llama-cpp-python==${LLAMA_VERSION}"

python - <<'PY'
import llama_cpp
ok = bool(llama_cpp.llama_supports_gpu_offload())
print("llama_supports_gpu_offload:", ok)
raise SystemExit(0 if ok else "llama-cpp-python was built without GPU offload")
PY

pyinstaller --noconfirm build.spec
dist/hanasu/hanasu --self-test
