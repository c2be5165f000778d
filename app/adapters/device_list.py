"""Which microphones and speakers PortAudio knows, and how to pick and open one.

sounddevice is imported lazily so the rest of the app, and machines without PortAudio,
never pay for it. Rescanning means re-initialising PortAudio, which closes every stream in
the process: ``list_devices`` skips it while a ``DeviceAudio`` runs (``running``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

from app.adapters.alsa_quiet import alsa_messages, quiet_alsa

log = logging.getLogger(__name__)


class AudioDeviceError(RuntimeError):
    """Audio devices cannot be used at all (no PortAudio); one line fit for the UI."""


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    index: int
    default_rate: int
    is_default: bool


@dataclass(frozen=True)
class DeviceList:
    inputs: tuple[DeviceInfo, ...]
    outputs: tuple[DeviceInfo, ...]


def sounddevice_module() -> ModuleType:
    quiet_alsa()  # before PortAudio probes the devices: alsa-lib's messages are noise
    try:
        import sounddevice
    except (OSError, ImportError) as exc:
        raise AudioDeviceError(
            "Audio devices unavailable: the PortAudio library was not found "
            "(Debian/Ubuntu: apt-get install libportaudio2)"
        ) from exc
    return cast(ModuleType, sounddevice)


def reinitialise(sd: ModuleType) -> None:
    """Re-read the device list (PortAudio only enumerates at initialisation).

    This closes every open stream in the process: callers close theirs first.
    """
    if sd._initialized > 0:
        sd._terminate()
    sd._initialize()


_RUNNING_LOCK = threading.Lock()
_running: set[int] = set()
"""ids of the DeviceAudio objects between start() and stop(), whose streams a rescan
would pull from under them."""


def mark_running(owner: object, running: bool) -> None:
    """``DeviceAudio.start``/``stop``: while any runs, ``list_devices`` does not rescan."""
    with _RUNNING_LOCK:
        if running:
            _running.add(id(owner))
        else:
            _running.discard(id(owner))
    if not running and alsa_messages():
        log.info("alsa-lib sent %d message(s), kept off the console", alsa_messages())


def _default_index(sd: ModuleType, kind: str) -> int | None:
    try:
        return int(sd.query_devices(kind=kind)["index"])
    except (sd.PortAudioError, ValueError, KeyError, TypeError):
        return None


def scan(sd: ModuleType) -> DeviceList:
    devices = sd.query_devices()
    default_in = _default_index(sd, "input")
    default_out = _default_index(sd, "output")
    inputs: list[DeviceInfo] = []
    outputs: list[DeviceInfo] = []
    for info in devices:
        index = int(info["index"])
        rate = int(info["default_samplerate"])
        if info["max_input_channels"] > 0:
            inputs.append(DeviceInfo(str(info["name"]), index, rate, index == default_in))
        if info["max_output_channels"] > 0:
            outputs.append(DeviceInfo(str(info["name"]), index, rate, index == default_out))
    return DeviceList(tuple(inputs), tuple(outputs))


def list_devices(rescan: bool = False) -> DeviceList:
    """Microphones and speakers PortAudio knows about.

    ``rescan=True`` picks up devices plugged in since PortAudio started. It closes every
    open stream in the process, so it is skipped (cached list) while a ``DeviceAudio``
    runs; that one rescans by itself whenever it reopens a device.
    """
    sd = sounddevice_module()
    try:
        if rescan:
            with _RUNNING_LOCK:
                if _running:
                    log.info("not rescanning audio devices while audio runs")
                else:
                    reinitialise(sd)
        return scan(sd)
    except sd.PortAudioError as exc:
        raise AudioDeviceError(f"Could not list audio devices: {exc}") from exc


def pick(devices: tuple[DeviceInfo, ...], wanted: str | None) -> tuple[DeviceInfo | None, bool]:
    """The wanted device by exact name, else the default, else the first; and whether
    the wanted one was missing (so the status can say it fell back)."""
    if wanted is not None:
        for device in devices:
            if device.name == wanted:
                return device, False
    fallback = next((d for d in devices if d.is_default), devices[0] if devices else None)
    return fallback, wanted is not None


def supports_rate(sd: ModuleType, index: int, rate: int) -> bool:
    try:
        sd.check_input_settings(device=index, channels=1, dtype="float32", samplerate=rate)
    except (sd.PortAudioError, ValueError):
        return False
    return True


def extra_settings(sd: ModuleType, index: int) -> Any:
    """WASAPI shared mode rejects rates other than the mixer's unless asked to convert."""
    try:
        hostapi = sd.query_hostapis(sd.query_devices(index)["hostapi"])["name"]
    except (sd.PortAudioError, ValueError, KeyError, TypeError):
        return None
    if "WASAPI" in str(hostapi):
        return sd.WasapiSettings(auto_convert=True)
    return None


@dataclass(frozen=True)
class DeviceStatus:
    """What the UI shows about the audio devices; ``ok`` False means no audio flows."""

    ok: bool
    message: str


def opened_message(mic: DeviceInfo, missing_mic: str | None,
                   speaker: DeviceInfo, missing_speaker: str | None) -> str:
    """The status line once both devices are open, naming a fallback where one was taken."""
    first = (f"Microphone {missing_mic} not found, using {mic.name}" if missing_mic
             else f"Microphone: {mic.name}")
    second = (f"speaker {missing_speaker} not found, using {speaker.name}" if missing_speaker
              else f"speaker: {speaker.name}")
    return f"{first}; {second}"
