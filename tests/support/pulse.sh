#!/usr/bin/env bash
# A PulseAudio server with a virtual microphone and speaker, for tests on machines
# without a sound card (CI, containers): a shell front for bench/virtual_audio.py.
# Idempotent: if the server already runs, only the missing sinks/sources are added.
#
#   eval "$(tests/support/pulse.sh)"        # then: python -m sounddevice
#   paplay -d micfeed speech.wav            # "speak" into the virtual microphone (vmic)
#   parec -d spk.monitor --file-format=wav out.wav   # record what was played
#
# Prints `export VAR=value` lines on stdout (the env to use); problems go to stderr.
# Start it BEFORE importing sounddevice: PortAudio enumerates devices at import.
# HANASU_PULSE_DIR overrides the runtime dir (default /tmp/hanasu-xdg).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
exec "${PYTHON:-python3}" -m bench.virtual_audio
