"""``hanasu bench room``: a shared room, not one person speaking to the companion.

Each run is one spoken scene through the whole pipeline in real time (real Silero VAD,
Whisper tiny.en and voice encoder; a scripted model and a tone voice, so only hearing and
turn-taking are measured):

1. two flatmates talk to each other (four lines, not addressed to the companion);
2. the user asks something;
3. a television reads the news, 12 dB under the user, nobody speaking to the companion;
4. the television goes on and the user asks something over it;
5. a flatmate calls the persona by name and asks something;
6. the user asks something.

Every scene runs with nobody enrolled and with the user's voice enrolled from a reading of
three sentences (the Voices dialog's way), in two rooms (different voices for the user, the
flatmates and the television). Reported, as Full-Duplex-Bench v1.5 counts its "talking to
others" and "background speech" cases: the take-over rate (stretches not addressed to the
companion that got an answer of their own), the user's requests answered, the answer's
delay after the user's last word, and whether a flatmate who says the name is answered.

Where it differs from that benchmark: synthetic voices (Piper, eSpeak NG) instead of
recorded people, a scripted model (no judgement of the reply's words), and a television
made of speech alone (no music or effects).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.core.events import FloatAudio

RATE = 16_000
USER_RMS_DB = -20.0
FLATMATE_RMS_DB = -23.0
TV_RMS_DB = -32.0
NOISE_RMS_DB = -55.0
FLATMATES_TALK = (
    "Did you remember to feed the cat this morning?",
    "Yes, I gave her the new food before breakfast.",
    "Good, and did anyone take the bins out yesterday?",
    "I think your brother did it after dinner.",
)
NEWS = (
    "In the news this evening, the city council has approved a new plan for the harbour.",
    "Work on the bridge will begin in the spring and take about two years.",
    "Meanwhile, heavy rain is expected along the coast for the rest of the week.",
    "Officials say the trains will run as normal despite the weather warnings.",
    "Sports fans will be pleased to hear that the final is on Saturday afternoon.",
    "And finally, a local bakery has won a national prize for its bread.",
)
ENROLMENT = (
    "The quick brown fox jumps over the lazy dog.",
    "Please call Stella and ask her to bring these things with her from the store.",
    "We also need a small plastic snake and a big toy frog for the kids.",
)


@dataclass(frozen=True)
class Request:
    text: str
    keyword: str
    """A word the transcript must hold for it to count as this request answered."""


USER_REQUESTS = (Request("What time is it right now?", "time"),
                 Request("Could you give me a recipe for pancakes?", "pancake"),
                 Request("Tell me a joke about penguins.", "penguin"))
ADDRESSED = Request("Kai, what is the weather like tomorrow?", "weather")


@dataclass(frozen=True)
class RoomVoices:
    name: str
    user: str
    flatmates: tuple[str, str]
    tv: str


ROOMS = (RoomVoices("joe at home", "piper:joe", ("espeak:en-gb+f2", "espeak:en-us+m1"),
                    "espeak:en-us+m3"),
         RoomVoices("scottish user", "espeak:en-gb-scotland+m7",
                    ("piper:joe", "espeak:en-us+f4"), "espeak:en-gb-x-rp+m3"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rooms", type=int, default=len(ROOMS), help="how many rooms to run")
    parser.add_argument("--json", type=Path, help="write the report here too")


class Speech:
    """A voice's speech at a level: Piper's joe or an eSpeak NG voice."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._piper: object | None = None

    def say(self, voice: str, text: str, rms_db: float) -> FloatAudio:
        import subprocess

        from app.adapters.file_audio import read_audio
        from app.adapters.resample import resample

        engine, name = voice.split(":")
        if engine == "piper":
            from app.adapters.piper_tts import PiperSynthesizer

            if self._piper is None:
                self._piper = PiperSynthesizer()
            assert isinstance(self._piper, PiperSynthesizer)
            audio = resample(self._piper.synthesize(text), self._piper.sample_rate, RATE)
        else:
            path = self.folder / "say.wav"
            subprocess.run(["espeak-ng", "-v", name, "-s", "155", "-w", str(path), text],
                           check=True, capture_output=True)
            audio = read_audio(path)
        loud = np.flatnonzero(np.abs(audio) > 0.02)
        audio = audio[loud[0]:loud[-1] + 1] if loud.size else audio
        rms = float(np.sqrt(np.mean(np.square(audio)))) or 1.0
        out: FloatAudio = (audio * (10 ** (rms_db / 20) / rms)).astype(np.float32)
        return out


@dataclass
class Scene:
    audio: FloatAudio
    stretches: list[tuple[str, float, float]]
    """(kind, start, end): "others", "tv", "tv+user" (the television with the user's request
    over it), "user:N", "addressed"."""


def build_scene(room: RoomVoices, speech: Speech) -> Scene:
    parts: list[FloatAudio] = []
    stretches: list[tuple[str, float, float]] = []
    position = 0

    def gap(seconds: float) -> None:
        nonlocal position
        parts.append(np.zeros(int(seconds * RATE), np.float32))
        position += int(seconds * RATE)

    def add(kind: str, audio: FloatAudio) -> None:
        nonlocal position
        stretches.append((kind, position / RATE, (position + audio.size) / RATE))
        parts.append(audio)
        position += audio.size

    gap(0.6)
    talk = []
    for index, line in enumerate(FLATMATES_TALK):
        talk += [speech.say(room.flatmates[index % 2], line, FLATMATE_RMS_DB),
                 np.zeros(int(0.5 * RATE), np.float32)]
    add("others", np.concatenate(talk[:-1]))
    gap(3.0)
    add("user:0", speech.say(room.user, USER_REQUESTS[0].text, USER_RMS_DB))
    gap(4.0)
    news = [speech.say(room.tv, line, TV_RMS_DB) for line in NEWS]
    pause = np.zeros(int(0.4 * RATE), np.float32)
    add("tv", np.concatenate([news[0], pause, news[1], pause, news[2]]))
    gap(3.0)
    tv = np.concatenate([news[3], pause, news[4], pause, news[5]])
    user = speech.say(room.user, USER_REQUESTS[1].text, USER_RMS_DB)
    at = int(3.0 * RATE)
    mixed = tv.copy()
    mixed[at:at + user.size] += user[:max(0, tv.size - at)]
    start = position / RATE
    add("tv+user", mixed)
    stretches.append(("user:1", start + at / RATE, start + (at + user.size) / RATE))
    gap(4.0)
    add("addressed", speech.say(room.flatmates[0], ADDRESSED.text, FLATMATE_RMS_DB))
    gap(4.0)
    add("user:2", speech.say(room.user, USER_REQUESTS[2].text, USER_RMS_DB))
    gap(4.0)
    audio = np.concatenate(parts)
    noise = np.random.default_rng(7).standard_normal(audio.size) * 10 ** (NOISE_RMS_DB / 20)
    return Scene((audio + noise).astype(np.float32), stretches)


def run_scene(scene: Scene, models: tuple[object, object, object],
              enrolled: bool, room: RoomVoices, speech: Speech) -> dict[str, object]:
    from app.adapters.fakes import FakeLanguageModel, FakeSynthesizer
    from app.cli.file_session import run_file
    from app.core.pipeline import Engines
    from app.core.voice_gate import VoicePrint
    from app.personas import load_personas

    vad, asr, encoder = models
    prints = []
    if enrolled:
        clips = [speech.say(room.user, text, USER_RMS_DB) for text in ENROLMENT]
        embed = encoder.embed  # type: ignore[attr-defined]
        prints = [VoicePrint.from_embeddings("user", [embed(c) for c in clips], time.time(),
                                             sum(c.size for c in clips) / RATE)]
    engines = Engines(vad, asr, FakeLanguageModel("Sure, here you are.", token_delay_s=0.03),  # type: ignore[arg-type]
                      FakeSynthesizer(), speaker=encoder)  # type: ignore[arg-type]
    result = run_file(engines, load_personas().get("kai"), scene.audio, voice_prints=prints,
                      max_wait_s=30.0)
    answered = [t for t in result.turns if t.heard_text or t.reply_text]
    return score(scene, [(t.speech_start, t.transcript.lower(), t.first_sample_played)
                         for t in answered])


def score(scene: Scene, answered: list[tuple[float | None, str, float | None]]
          ) -> dict[str, object]:
    """Which stretches got an answer of their own, which requests were answered and when."""
    users = {kind: (start, end) for kind, start, end in scene.stretches
             if kind.startswith("user:")}
    requests: dict[str, object] = {}
    for kind, (_start, end) in users.items():
        request = USER_REQUESTS[int(kind.split(":")[1])]
        hits = [played for _at, text, played in answered if request.keyword in text]
        requests[request.text] = (round(hits[0] - end, 2) if hits and hits[0] is not None
                                  else None if not hits else "answered")
    others = [(kind, start, end) for kind, start, end in scene.stretches
              if kind in ("others", "tv", "tv+user")]
    taken_over = []
    for kind, start, end in others:
        own = [text for at, text, _played in answered if at is not None
               and start - 0.3 <= at <= end + 0.5
               and not any(r.keyword in text for r in (*USER_REQUESTS, ADDRESSED))]
        taken_over.append({"kind": kind, "answered": own})
    addressed = any(ADDRESSED.keyword in text for _at, text, _played in answered)
    return {"requests": requests, "not_addressed": taken_over, "addressed_answered": addressed,
            "turns": [text for _at, text, _played in answered]}


def _share(flags: list[bool]) -> str:
    return f"{sum(flags)} of {len(flags)}"


def main(args: argparse.Namespace) -> int:
    from app.adapters.silero_vad import SileroVad
    from app.adapters.voice_encoder import VoiceEncoder
    from app.adapters.whisper_asr import WhisperRecognizer
    from app.models.resolve import resolve
    from bench.latency import machine_name

    models = (SileroVad(resolve("vad").path), WhisperRecognizer(resolve("asr").path),
              VoiceEncoder())
    report: dict[str, object] = {"machine": machine_name(), "load_average": os.getloadavg()}
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        speech = Speech(Path(tmp))
        for room in ROOMS[:args.rooms]:
            scene = build_scene(room, speech)
            for enrolled in (False, True):
                run = {"room": room.name, "enrolled": enrolled,
                       **run_scene(scene, models, enrolled, room, speech)}
                print(json.dumps(run), flush=True)
                runs.append(run)
    for enrolled in (False, True):
        mine = [r for r in runs if r["enrolled"] is enrolled]
        stretches = [s for r in mine for s in r["not_addressed"]]  # type: ignore[attr-defined]
        delays = [d for r in mine for d in r["requests"].values()  # type: ignore[attr-defined]
                  if isinstance(d, float)]
        answered = sum(d is not None for r in mine
                       for d in r["requests"].values())  # type: ignore[attr-defined]
        report["voice enrolled" if enrolled else "nobody enrolled"] = {
            "runs": len(mine),
            "take_over_rate": round(sum(bool(s["answered"]) for s in stretches)
                                    / max(1, len(stretches)), 3),
            "take_over_by_kind": {kind: _share([bool(s["answered"]) for s in stretches
                                                if s["kind"] == kind])
                                  for kind in ("others", "tv", "tv+user")},
            "user_requests_answered": f"{answered} of {3 * len(mine)}",
            "answer_after_last_word_s": sorted(delays),
            "addressed_by_name_answered": f"{sum(bool(r['addressed_answered']) for r in mine)}"
                                          f" of {len(mine)}",
        }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0
