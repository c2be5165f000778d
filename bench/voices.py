"""``hanasu bench voices``: does the voice print tell one voice from another, and how fast.

Each voice reads twelve short requests. Its print is made from the first four, as the
Voices dialog makes one from a reading; the other eight are each compared with every
voice's print: with its own (same voice) and with the others' (other voice). Reported: the
similarity distributions, the share wrongly ignored (same voice under the threshold) and
wrongly heard (other voice at or over it) at each threshold, and the time one print takes
for 1-10 s of speech.

Learning (Voices: "Learn my voice"): each voice in turn is the user, who makes eight
requests with another voice's two between them (a flatmate); reported is whether a print
was learnt, after how many requests, whether the flatmate was left out of it, and how it
judges the user's and every other voice's last four requests.

Voices: five eSpeak NG variants (a man, women, British and American; Debian's espeak-ng),
Piper's joe (PyPI), and with ``--kokoro`` the five Japanese Kokoro voices reading English
(about two minutes to synthesize). Held out of the threshold choice and reported on its own:
two women on a telephone line (``bench/recordings/pyannote_sample.wav``, their turns of
1.2 s or more, cut by its ``.stm`` times).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf
import soxr

from app.core.events import FloatAudio
from app.core.voice_gate import SAME_VOICE_SIMILARITY, VoiceGate
from app.core.voice_learning import VoiceLearner

RATE = 16_000
RECORDINGS = Path(__file__).resolve().parent / "recordings"
REQUESTS = (
    "What time is it right now?",
    "Could you tell me a joke about cats?",
    "Remind me to water the plants tomorrow morning.",
    "The weather looks lovely outside today.",
    "Did anyone buy milk on the way home?",
    "I think the train leaves at half past seven.",
    "Please turn the music down a little.",
    "We should clean the kitchen this weekend.",
    "How far away is the nearest library?",
    "My brother is visiting us next month.",
    "Put the keys on the table by the door.",
    "Tell me something interesting about the moon.",
)
ENROL = 4
ESPEAK = {
    "espeak en-us m1": ["-v", "en-us+m1", "-s", "150"],
    "espeak en-us m3": ["-v", "en-us+m3", "-s", "140", "-p", "35"],
    "espeak en-gb f2": ["-v", "en-gb+f2", "-s", "150"],
    "espeak en-us f4": ["-v", "en-us+f4", "-s", "145", "-p", "70"],
    "espeak en-gb m7": ["-v", "en-gb-x-rp+m7", "-s", "160"],
}
KOKORO = ("jf_alpha", "jf_gongitsune", "jf_nezumi", "jf_tebukuro", "jm_kumo")
THRESHOLDS = (0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kokoro", action="store_true", help="add the five Kokoro voices")
    parser.add_argument("--json", type=Path, help="write the report here too")


def _to_rate(audio: FloatAudio, rate: int) -> FloatAudio:
    out: FloatAudio = soxr.resample(audio, rate, RATE).astype(np.float32)
    return out


def _espeak(args: list[str]) -> Callable[[str], FloatAudio]:
    def say(text: str) -> FloatAudio:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "say.wav"
            subprocess.run(["espeak-ng", *args, "-w", str(path), text], check=True)
            audio, rate = sf.read(path, dtype="float32")
        return _to_rate(audio, rate)
    return say


def synthetic_voices(kokoro: bool) -> dict[str, list[FloatAudio]]:
    from app.adapters.piper_tts import PiperSynthesizer

    voices = {name: [_espeak(args)(t) for t in REQUESTS] for name, args in ESPEAK.items()}
    piper = PiperSynthesizer()
    voices["piper joe"] = [_to_rate(piper.synthesize(t), piper.sample_rate) for t in REQUESTS]
    if kokoro:
        from app.adapters.kokoro_models import embedded_model_path, embedded_voices_path
        from app.adapters.kokoro_tts import KokoroSynthesizer

        tts = KokoroSynthesizer(embedded_model_path(), embedded_voices_path(), KOKORO[0])
        for voice in KOKORO:
            voices[f"kokoro {voice}"] = [_to_rate(tts.synthesize_as(t, voice, 1.0),
                                                  tts.sample_rate) for t in REQUESTS]
    return voices


def telephone_voices() -> dict[str, list[FloatAudio]]:
    audio, _ = sf.read(RECORDINGS / "pyannote_sample.wav", dtype="float32")
    turns: dict[str, list[FloatAudio]] = {}
    for line in (RECORDINGS / "pyannote_sample.stm").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 5 and float(parts[4]) - float(parts[3]) >= 1.2:
            start, end = int(float(parts[3]) * RATE), int(float(parts[4]) * RATE)
            turns.setdefault(f"telephone {parts[2]}", []).append(audio[start:end])
    return turns


def similarities(encoder: object, voices: dict[str, list[FloatAudio]],
                 enrol: int) -> tuple[list[float], list[float]]:
    embed = encoder.embed  # type: ignore[attr-defined]
    prints = {name: embed(np.concatenate(clips[:enrol])) for name, clips in voices.items()}
    same: list[float] = []
    other: list[float] = []
    for name, clips in voices.items():
        for clip in clips[enrol:]:
            vector = embed(clip)
            for owner, voice_print in prints.items():
                (same if owner == name else other).append(float(voice_print @ vector))
    return same, other


def _spread(values: list[float]) -> dict[str, float]:
    points = np.percentile(values, [0, 5, 50, 95, 100]) if values else [np.nan] * 5
    return dict(zip(("min", "p5", "p50", "p95", "max"), (round(float(p), 3) for p in points),
                    strict=True))


def _errors(same: list[float], other: list[float]) -> dict[str, dict[str, float]]:
    return {f"{t:.2f}": {"ignored_same": round(float(np.mean(np.array(same) < t)), 3),
                         "heard_other": round(float(np.mean(np.array(other) >= t)), 3)}
            for t in THRESHOLDS}


def timings(encoder: object, speech: FloatAudio) -> dict[str, float]:
    embed = encoder.embed  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for seconds in (1, 2, 3, 5, 10):
        clip = np.resize(speech, seconds * RATE)
        embed(clip)
        runs = []
        for _ in range(5):
            started = time.perf_counter()
            embed(clip)
            runs.append(time.perf_counter() - started)
        out[f"{seconds} s"] = round(1000 * float(np.median(runs)), 1)
    return out


def learning(encoder: object, voices: dict[str, list[FloatAudio]]) -> dict[str, object]:
    embed = encoder.embed  # type: ignore[attr-defined]
    vectors = {name: [embed(clip) for clip in clips] for name, clips in voices.items()}
    names = sorted(voices)
    learnt, needed, flatmate_in, ignored, heard = 0, [], 0, [], []
    for index, user in enumerate(names):
        flatmate = names[(index + 1) % len(names)]
        heard_order = [(user, 0), (user, 1), (flatmate, 0), (user, 2), (user, 3),
                       (flatmate, 1), (user, 4), (user, 5), (user, 6), (user, 7)]
        learner, made = VoiceLearner(), None
        for count, (who, n) in enumerate(heard_order, 1):
            made = learner.add(vectors[who][n], voices[who][n].size / RATE, 0.0)
            if made is not None:
                needed.append(count)
                break
        if made is None:
            continue
        learnt += 1
        users_speech = sum(voices[user][n].size for w, n in heard_order[:count] if w == user)
        flatmate_in += int(made.speech_s > users_speech / RATE + 0.01)
        gate = VoiceGate((made,))
        ignored += [not gate.known(v) for v in vectors[user][8:]]
        heard += [gate.known(v) for name in names if name != user for v in vectors[name][8:]]
    return {"users": len(names), "learnt": learnt,
            "requests_heard_until_learnt": _spread([float(n) for n in needed]),
            "flatmate_in_print": flatmate_in,
            "ignored_same": round(float(np.mean(ignored)), 3) if ignored else None,
            "heard_other": round(float(np.mean(heard)), 3) if heard else None}


def main(args: argparse.Namespace) -> int:
    from app.adapters.voice_encoder import VoiceEncoder

    encoder = VoiceEncoder()
    synthetic = synthetic_voices(args.kokoro)
    same, other = similarities(encoder, synthetic, ENROL)
    phone_same, phone_other = similarities(encoder, telephone_voices(), 2)
    report = {
        "threshold": SAME_VOICE_SIMILARITY,
        "voices": sorted(synthetic),
        "same_voice": _spread(same), "other_voice": _spread(other),
        "errors": _errors(same, other),
        "held_out_telephone": {"same_voice": _spread(phone_same),
                               "other_voice": _spread(phone_other),
                               "errors": _errors(phone_same, phone_other)},
        "learning": learning(encoder, synthetic),
        "embed_ms_median": timings(encoder, np.concatenate(synthetic["piper joe"])),
    }
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0
