"""alsa-lib's console messages (underruns at stream start, cards PortAudio probes) are
counted, not printed, once the audio devices are used (issue 23 item 11)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPEN_MISSING_PCM = (
    "import ctypes, ctypes.util\n"
    "lib = ctypes.CDLL(ctypes.util.find_library('asound'))\n"
    "handle = ctypes.c_void_p()\n"
    "assert lib.snd_pcm_open(ctypes.byref(handle), b'no-such-pcm', 0, 0) < 0\n"
)


def _stderr(script: str) -> str:
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stderr + done.stdout


def test_alsa_lib_prints_by_default() -> None:
    assert "ALSA lib" in _stderr(OPEN_MISSING_PCM)  # the noise (and alsa-lib is installed)


def test_the_audio_devices_keep_alsa_lib_quiet() -> None:
    prelude = ("from app.adapters.audio_devices import _sounddevice\n"
               "_sounddevice()\n")
    check = ("from app.adapters.alsa_quiet import alsa_messages\n"
             "print('counted', alsa_messages())\n")
    out = _stderr(prelude + OPEN_MISSING_PCM + check)
    assert "ALSA lib" not in out
    counted = int(out.split("counted ")[1].split()[0])
    assert counted >= 1  # the missing PCM's message (PortAudio's probing may add more)
