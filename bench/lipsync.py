"""``hanasu bench lipsync``: the mouth against the sound, per voice, on one clock.

Each voice says a few sentences through the app's own path: the ``Synthesizer`` stage
(phonemes, the mouth timeline), the ``PlaybackQueue``, the ``OutputFeeder`` and its ring,
read by a simulated device every 20 ms that says when its block plays (``DEVICE_LATENCY_S``
ahead, as PortAudio's DAC time does). The events go through the real ``EventBridge`` to a
real ``AvatarWidget`` (offscreen), wired as the window wires it. Two records on the
pipeline clock: every block the device played (at its play time) and every painted frame
(the mouth's opening and shape as painted).

Onsets: in the audio, where the 5 ms loudness in the 300-3000 Hz band (a syllable's vowel
or voiced consonant; a hiss is not a syllable's start) rises over a quarter of the voice's
loud level after at least 40 ms under a tenth of it (after silence or a closure); in
the mouth, where the painted mouth opens (an opening over 0.05, the drawn face shows it open
from 0.04) after a frame or more shut (under 0.01; the face paints every 30 ms). Onsets are
paired one to one, closest first, within 250 ms; the sound onsets left unpaired are syllables
the mouth did not show apart. The offset is sound
minus mouth: positive when the sound comes after the mouth ("sound late"), negative when
before ("sound early"). ITU-R BT.1359 tolerates -45 ms .. +125 ms. ``--mouth level`` runs
the old path (the mouth follows PlaybackLevel as it arrives) for comparison. The last
sentences of each language (``HELD_OUT``) were never looked at while tuning: their figures
are reported apart.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.core.events import FloatAudio

VOICES = ("piper/en", "espeak/en", "kokoro/en", "kokoro/ja", "kokoro/zh")
SENTENCES = {
    "en": ("Maybe we could bake some bread this afternoon.",
           "The weather is lovely today, so let's go for a walk by the river.",
           "I put the book back on the top shelf.",
           "Do you remember what we talked about yesterday?"),
    "ja": ("今日はとても良い天気ですね。", "明日の会議は午後三時からです。",
           "私は毎朝コーヒーを飲みます。"),
    "zh": ("今天天气很好。", "这本书非常有意思。", "我明天下午去北京。"),
}
HELD_OUT = {
    "en": ("Could you check whether the bus leaves at seven?",
           "My favourite fruit is a ripe mango."),
    "ja": ("駅までは歩いて十分くらいです。",),
    "zh": ("我们周末一起去公园散步吧。",),
}
"""Sentences no threshold or constant was tuned on, reported apart."""
BLOCK_S = 0.02
DEVICE_LATENCY_S = 0.03
HOP_S = 0.005
TOLERANCE_MS = (-45.0, 125.0)
PAIR_WITHIN_S = 0.25
SYLLABIC_HZ = (300.0, 3000.0)
MOUTH_OPEN, MOUTH_SHUT = 0.05, 0.01
"""The drawn face shows an open mouth from an opening of 0.04 (``face_features.mouth``)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--voices", default=",".join(VOICES),
                        help="engine/language pairs (default: %(default)s)")
    parser.add_argument("--mouth", choices=("timeline", "level"), default="timeline",
                        help="timeline: the lip-sync path; level: the mouth follows the "
                             "playback level as it arrives (the old path)")
    parser.add_argument("--json", type=Path, help="write the report here too")


class Device:
    """Reads the ring every ``BLOCK_S`` like an audio callback and keeps what it played,
    stamped with when it plays on the pipeline clock."""

    def __init__(self, ring: Any, rate: int, now: Any) -> None:
        self.ring, self.rate, self.now = ring, rate, now
        self.blocks: list[tuple[float, FloatAudio]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-device", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        frames = round(BLOCK_S * self.rate)
        due = time.monotonic()
        while not self._stop.is_set():
            out = np.zeros(frames, dtype=np.float32)
            plays_at = self.now() + DEVICE_LATENCY_S
            self.ring.read_into(out, plays_at)
            self.blocks.append((plays_at, out))
            due += BLOCK_S
            time.sleep(max(0.0, due - time.monotonic()))


def syllabic(audio: FloatAudio, rate: int) -> FloatAudio:
    """``audio`` in the 300-3000 Hz band, where vowels and voiced consonants are loud and
    a hiss (s, sh, f) is not: energy there rising is a syllable's nucleus starting."""
    spectrum = np.fft.rfft(audio)
    freqs = np.fft.rfftfreq(audio.size, 1.0 / rate)
    spectrum[(freqs < SYLLABIC_HZ[0]) | (freqs > SYLLABIC_HZ[1])] = 0.0
    band: FloatAudio = np.fft.irfft(spectrum, n=audio.size).astype(np.float32)
    return band


def audio_onsets(blocks: list[tuple[float, FloatAudio]], rate: int) -> list[float]:
    """Syllable onsets of the played audio (see the module's docstring)."""
    times, levels = [], []
    hop = round(HOP_S * rate)
    band = syllabic(np.concatenate([b for _, b in blocks]), rate)
    at = 0
    for start, block in blocks:
        part = band[at:at + block.size]
        at += block.size
        for k in range(0, block.size - hop + 1, hop):
            times.append(start + k / rate)
            levels.append(float(np.sqrt(np.mean(np.square(part[k:k + hop])))))
    level = np.array(levels)
    loud = float(np.percentile(level[level > 1e-4], 95)) if np.any(level > 1e-4) else 1.0
    return _onsets(np.array(times), level / loud, 0.25, 0.1)


def _onsets(times: np.ndarray, values: np.ndarray, high: float, low: float,
            quiet_s: float = 0.04) -> list[float]:
    """Where ``values`` rise over ``high`` after ``quiet_s`` or more under ``low``."""
    found: list[float] = []
    quiet_since: float | None = float(times[0]) - 1.0 if times.size else None
    for t, v in zip(times, values, strict=True):
        if v < low:
            quiet_since = float(t) if quiet_since is None else quiet_since
        elif v >= high:
            if quiet_since is not None and t - quiet_since >= quiet_s:
                found.append(float(t))
            quiet_since = None
    return found


def pair(sound: list[float], mouth: list[float]) -> list[tuple[float, float]]:
    """(sound onset, sound minus mouth) in s, pairing onsets one to one, closest first, within
    ``PAIR_WITHIN_S`` (a syllable the mouth did not show is left unpaired, not matched to
    its neighbour's)."""
    candidates = sorted((abs(s - m), i, j) for i, s in enumerate(sound)
                        for j, m in enumerate(mouth) if abs(s - m) <= PAIR_WITHIN_S)
    used_sound: set[int] = set()
    used_mouth: set[int] = set()
    offsets = []
    for _, i, j in candidates:
        if i not in used_sound and j not in used_mouth:
            used_sound.add(i)
            used_mouth.add(j)
            offsets.append((sound[i], sound[i] - mouth[j]))
    return offsets


def _stats(values: list[float], scale: float = 1000.0) -> dict[str, float]:
    if not values:
        return {}
    array = np.array(values) * scale
    return {"p5": float(np.percentile(array, 5)), "p50": float(np.percentile(array, 50)),
            "p95": float(np.percentile(array, 95)), "min": float(array.min()),
            "max": float(array.max())}


def _offsets(offsets: list[float]) -> dict[str, Any]:
    low, high = TOLERANCE_MS
    return {"paired": len(offsets), "offset_ms": _stats(offsets),
            "within_tolerance": sum(low <= o * 1000 <= high for o in offsets)}


def run_voice(tts: Any, language: str, mouth: str) -> dict[str, Any]:
    """Plays the language's sentences in ``tts`` and measures the avatar against them."""
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from app.core.events import AssistantState, ReplyChunk
    from app.core.output_ring import OutputFeeder
    from app.core.playback import PlaybackQueue
    from app.core.runtime.config import MonotonicClock
    from app.core.stage_jobs import EndOfReply
    from app.core.synthesizer import Synthesizer
    from app.core.worker import LiveTurn
    from app.ui.avatar import AvatarWidget
    from app.ui.bridge import EventBridge

    _app = QApplication.instance() or QApplication([])
    clock = MonotonicClock()
    bridge = EventBridge()
    frames: list[tuple[float, float]] = []
    ticks: list[list[float]] = []
    """Frame times while speaking, one list per sentence (between them the face rests)."""

    class Recorded(AvatarWidget):
        def paintEvent(self, event: Any) -> None:
            super().paintEvent(event)
            frames.append((clock.now(), self.mouth))

        def advance(self, t: float) -> None:
            super().advance(t)
            if self.state is AssistantState.SPEAKING and ticks:
                ticks[-1].append(clock.now())

    avatar = Recorded()
    avatar.resize(300, 300)
    avatar.show()
    if mouth == "timeline":
        avatar.play_clock = clock.now
        bridge.mouth.connect(avatar.mouth_cue)
    bridge.playback_level.connect(lambda level, _at: avatar.set_level(level))

    held_from: list[float] = []
    """When the first held-out sentence started to play."""
    tuned = len(SENTENCES[language])

    def started(turn: int, at: float) -> None:
        if turn == tuned + 1:
            held_from.append(at)
        ticks.append([])
        avatar.set_state(AssistantState.SPEAKING)

    bridge.playback_started.connect(started)
    playback = PlaybackQueue(tts.sample_rate, bridge.post)
    live = LiveTurn()
    synth = Synthesizer(bridge.post, tts, live, clock, playback)
    feeder = OutputFeeder(playback.pull, clock.now, tts.sample_rate,
                          round(BLOCK_S * tts.sample_rate), lead_blocks=4,
                          has_work=lambda: not playback.idle(), wake=playback.wake)
    device = Device(feeder.ring, tts.sample_rate, clock.now)
    done = threading.Event()

    def ended(*_args: object) -> None:
        avatar.set_state(AssistantState.IDLE)
        done.set()

    bridge.playback_ended.connect(ended)

    def speak() -> None:
        said = (*SENTENCES[language], *HELD_OUT[language])
        for turn, text in enumerate(said, start=1):
            done.clear()
            live.turn_id = turn
            playback.begin(turn, held=False)
            synth.handle(ReplyChunk(turn, 0, text, clock.now(), language=language))
            synth.handle(EndOfReply(turn))
            while not done.wait(0.05):
                pass
            time.sleep(0.4)
        finished.set()

    finished = threading.Event()
    feeder.start()
    device.start()
    threading.Thread(target=speak, name="bench-speaker", daemon=True).start()
    loop = QEventLoop()
    poll = QTimer()
    poll.timeout.connect(lambda: loop.quit() if finished.is_set() else None)
    poll.start(50)
    loop.exec()
    device.stop()
    feeder.stop()
    avatar.close()
    sound = audio_onsets(device.blocks, tts.sample_rate)
    times = np.array([t for t, _ in frames])
    mouth_onsets = _onsets(times, np.array([m for _, m in frames]), MOUTH_OPEN, MOUTH_SHUT,
                           quiet_s=0.02)
    paired = pair(sound, mouth_onsets)
    split = held_from[0] if held_from else float("inf")
    gaps = np.concatenate([np.diff(np.array(t)) for t in ticks if len(t) > 1] or [np.zeros(0)])
    return {
        "sound_onsets": len(sound), "mouth_onsets": len(mouth_onsets),
        **_offsets([o for _, o in paired]),
        "held_out": {"sound_onsets": sum(t >= split for t in sound),
                     **_offsets([o for t, o in paired if t >= split])},
        "frame_interval_ms": _stats(list(gaps)) if gaps.size else {},
        "frames_over_50ms": int(np.sum(gaps > 0.05)),
    }


def main(args: argparse.Namespace) -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from bench.latency import machine_name
    from bench.tts import load_engine

    report: dict[str, Any] = {"machine": machine_name(), "mouth": args.mouth,
                              "sign": "sound minus mouth: + sound late, - sound early",
                              "tolerance_ms": TOLERANCE_MS, "voices": {}}
    for pair_name in (v.strip() for v in args.voices.split(",") if v.strip()):
        engine, _, language = pair_name.partition("/")
        tts = load_engine(engine, language or "en")
        if tts is None:
            print(f"{pair_name}: not installed here, skipped", flush=True)
            continue
        load = os.getloadavg()[0]
        result = run_voice(tts, language or "en", args.mouth)
        result["load_avg_1m"] = load
        report["voices"][pair_name] = result
        off, frame = result["offset_ms"], result["frame_interval_ms"]
        nan = float("nan")
        print(f"{pair_name:10s} offset p50 {off.get('p50', nan):+6.1f} ms "
              f"p95 {off.get('p95', nan):+6.1f} ms (p5 {off.get('p5', nan):+6.1f})"
              f", {result['within_tolerance']}/{result['paired']} within "
              f"{TOLERANCE_MS[0]:+.0f}..{TOLERANCE_MS[1]:+.0f} ms "
              f"({result['sound_onsets']} sound onsets); frames max "
              f"{frame.get('max', nan):.0f} ms p95 {frame.get('p95', nan):.0f}"
              f" ms, over 50 ms: {result['frames_over_50ms']}; load {load:.2f}", flush=True)
        held = result["held_out"]
        print(f"{'':10s} held out: p50 {held['offset_ms'].get('p50', nan):+6.1f} ms p95 "
              f"{held['offset_ms'].get('p95', nan):+6.1f} ms, {held['within_tolerance']}/"
              f"{held['paired']} within ({held['sound_onsets']} sound onsets)", flush=True)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0
