#!/usr/bin/env bash
# A PulseAudio server with a virtual microphone and speaker, for tests on machines
# without a sound card (CI, containers). Idempotent: if the server already runs, only
# the missing sinks/sources are added.
#
#   eval "$(tests/support/pulse.sh)"        # then: python -m sounddevice
#   paplay -d micfeed speech.wav            # "speak" into the virtual microphone (vmic)
#   parec -d spk.monitor --file-format=wav out.wav   # record what was played
#
# Prints `export VAR=value` lines on stdout (the env to use); progress goes to stderr.
# Start it BEFORE importing sounddevice: PortAudio enumerates devices at import.
# HANASU_PULSE_DIR overrides the runtime dir (default /tmp/hanasu-xdg).
set -euo pipefail

runtime_dir="${HANASU_PULSE_DIR:-/tmp/hanasu-xdg}"
export XDG_RUNTIME_DIR="$runtime_dir"
export PULSE_SERVER="unix:$runtime_dir/pulse/native"
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

for tool in pulseaudio pactl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "pulse.sh: $tool not found (apt-get install pulseaudio pulseaudio-utils)" >&2
        exit 2
    fi
done

if ! pactl info >/dev/null 2>&1; then
    echo "pulse.sh: starting PulseAudio in $XDG_RUNTIME_DIR" >&2
    # -n: no default.pa (no hardware probing); the modules below are all we need.
    # Root is allowed here (containers); pulseaudio only warns about it.
    pulseaudio -D -n --exit-idle-time=-1 --load=module-native-protocol-unix \
        --load="module-null-sink sink_name=spk" \
        --load="module-null-sink sink_name=micfeed" \
        --load="module-remap-source source_name=vmic master=micfeed.monitor" \
        >&2 || true
    for _ in $(seq 1 50); do
        pactl info >/dev/null 2>&1 && break
        sleep 0.1
    done
    if ! pactl info >/dev/null 2>&1; then
        echo "pulse.sh: PulseAudio did not come up in $XDG_RUNTIME_DIR" >&2
        exit 1
    fi
fi

sinks="$(pactl list short sinks)"
sources="$(pactl list short sources)"
has() { printf '%s\n' "$1" | awk '{print $2}' | grep -qx "$2"; }
if ! has "$sinks" spk; then
    pactl load-module module-null-sink sink_name=spk >/dev/null
fi
if ! has "$sinks" micfeed; then
    pactl load-module module-null-sink sink_name=micfeed >/dev/null
fi
if ! has "$sources" vmic; then
    pactl load-module module-remap-source source_name=vmic master=micfeed.monitor >/dev/null
fi
pactl set-default-sink spk
pactl set-default-source vmic

echo "export XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"
echo "export PULSE_SERVER=$PULSE_SERVER"
