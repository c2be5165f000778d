"""``hanasu bench turns``: does it take turns like a person? Cut-offs, late ends, barge-in.

Three measurements on speech made on this machine, in real time through the real VAD,
Whisper and (when installed) Smart Turn, with a scripted LLM and voice so that only the
turn-taking is measured:

- **End of turn**, on a labelled set of requests in several voices: finished ones (a
  *late end* is a turn still open more than 0.5 s after the last word, and still open after
  its transcript was in: the reply was kept waiting) and ones with a pause of 0.12-0.9 s in
  the middle (a *cut-off* is a turn ended inside that pause). Run twice: with
  the words at the first pause taking part in the call (now) and without (before).
- **Barge-in**: the user talks over a reply, with and without simulated loudspeakers
  (echo room, AEC on): seconds from the voice onset to the reply pausing.
- **Phantom turns**: turns that got a reply or interrupted one although they did not start
  where the user spoke (the assistant's own echo, or what Whisper makes of it).

Numbers depend on the machine's load: the report records the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.core.events import FloatAudio

RATE = 16_000
LATE_END_S = 0.5

FINISHED = [
    "Why is the sky blue?",
    "What time zone is Tokyo in?",
    "Can you tell me a joke?",
    "What should I cook for dinner tonight?",
    "How far away is the moon?",
    "Please read me the news headlines.",
    "What is a good name for a grey kitten?",
    "Is it going to rain this afternoon?",
    "Set a timer for the pasta.",
    "How many legs does a spider have?",
]

PAUSED = [
    ("I would like to go to the", "beach this weekend."),
    ("Tell me a long story about a dragon", "who learns to bake bread."),
    ("Can you remind me to call", "my sister tomorrow morning?"),
    ("So what I was thinking is that", "we could cook pasta tonight."),
    ("What is the difference between", "a frog and a toad?"),
    ("My favourite books are the ones", "with a mystery at the center."),
    ("Before you answer,", "think about it carefully."),
    ("I went to the market and bought apples,", "bread and cheese."),
    ("Could you recommend a quiet place", "to read near the river?"),
    ("Yesterday the train was late again, so", "I missed the meeting."),
]

GAPS = [0.12, 0.2, 0.35, 0.5, 0.7, 0.9]

VOICES = [("piper", "joe", 0), ("espeak", "en-us", 150), ("espeak", "en-gb", 165),
          ("espeak", "en-gb-scotland", 155)]
"""(engine, voice, words per minute; 0 = the voice's own pace)."""


@dataclass(frozen=True)
class Case:
    name: str
    voice: str
    parts: tuple[str, ...]
    gap_s: float
    """Pause inside the request (0: a finished request said in one go)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", type=int, default=40,
                        help="requests in the end-of-turn set (half finished, half paused)")
    parser.add_argument("--barge-ins", type=int, default=6,
                        help="talk-over runs, each with and without simulated loudspeakers")
    parser.add_argument("--work-ahead", action=argparse.BooleanOptionalAction, default=True,
                        help="transcribe and score the utterance at its first quiet frame "
                        "(off: at the 96 ms pause, as before)")
    parser.add_argument("--only", choices=["end-of-turn", "barge-in"], help="one part only")
    parser.add_argument("--json", type=Path, help="write the report here too")


def cases(count: int) -> list[Case]:
    """Half finished requests, half with a pause inside, spread over the voices and gaps."""
    out: list[Case] = []
    for index in range(count):
        engine, voice, _wpm = VOICES[index % len(VOICES)]
        label = f"{engine}:{voice}"
        if index % 2 == 0:
            text = FINISHED[(index // 2) % len(FINISHED)]
            out.append(Case(f"f{index:02d}", label, (text,), 0.0))
        else:
            first, second = PAUSED[(index // 2) % len(PAUSED)]
            gap = GAPS[(index // 2) % len(GAPS)]
            out.append(Case(f"p{index:02d}", label, (first, second), gap))
    return out


class Voices:
    """Speech for a case's parts: espeak-ng, or the embedded Piper voice."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.espeak = shutil.which("espeak-ng")
        self._piper: object | None = None

    def say(self, voice: str, text: str) -> FloatAudio:
        from app.adapters.file_audio import read_audio
        from app.adapters.resample import resample

        engine, name = voice.split(":")
        if engine == "piper":
            from app.adapters.piper_tts import PiperSynthesizer

            if self._piper is None:
                self._piper = PiperSynthesizer()
            assert isinstance(self._piper, PiperSynthesizer)
            speech = resample(self._piper.synthesize(text), self._piper.sample_rate, RATE)
        else:
            if self.espeak is None:
                raise RuntimeError("espeak-ng is needed (apt-get install espeak-ng)")
            wpm = next(w for e, v, w in VOICES if f"{e}:{v}" == voice)
            path = self.folder / "say.wav"
            subprocess.run([self.espeak, "-v", name, "-s", str(wpm), "-w", str(path), text],
                           check=True, capture_output=True)
            speech = read_audio(path)
        loud = np.flatnonzero(np.abs(speech) > 0.02)
        return speech[loud[0]:loud[-1] + 1] if loud.size else speech


def _silence(seconds: float) -> FloatAudio:
    return np.zeros(int(seconds * RATE), np.float32)


def _engines(ears: tuple[object, object]) -> object:
    from app.adapters.fakes import FakeLanguageModel, FakeSynthesizer
    from app.core.pipeline import Engines

    vad, asr = ears
    # 30 ms a token: a reply starts a few hundred ms after the end of turn, as on a CPU
    llm = FakeLanguageModel(reply="Sure. Here is what I think about that.", token_delay_s=0.03)
    return Engines(vad, asr, llm, FakeSynthesizer())  # type: ignore[arg-type]


def end_of_turn(case: Case, audio: FloatAudio, speech: list[tuple[float, float]],
                ears: tuple[object, object], words: bool, ahead: bool = True
                ) -> dict[str, object]:
    """One request through the pipeline: was it cut off inside its pause, how long was the
    wait after its last word?"""
    from app.cli.file_session import run_file
    from app.core.pipeline import PipelineConfig
    from app.engines import build_turn_detector
    from app.personas import load_personas

    persona = load_personas().default
    result = run_file(_engines(ears), persona, audio,  # type: ignore[arg-type]
                      config=PipelineConfig(words_end_turns=words, transcribe_ahead=ahead),
                      max_wait_s=20.0,
                      turn_detector=build_turn_detector())
    ends = [t.end_of_turn for t in result.turns if t.end_of_turn is not None]
    cut_off = len(speech) > 1 and any(speech[0][1] <= e < speech[1][0] for e in ends)
    last_end = speech[-1][1]
    final = [t for t in result.turns if t.end_of_turn is not None and t.end_of_turn >= last_end]
    wait = open_after_words = None
    if final:
        turn = min(final, key=lambda t: t.end_of_turn or 0.0)
        assert turn.end_of_turn is not None
        wait = turn.end_of_turn - last_end
        # With the words rule the turn closes when its transcript is in, which the reply
        # needed anyway: only time it stayed open after that is waiting for nothing.
        known = max(last_end, turn.asr_final or last_end)
        open_after_words = max(0.0, turn.end_of_turn - known)
    late = wait is None or (wait > LATE_END_S and (open_after_words or 0.0) > 0.1)
    return {"case": case.name, "voice": case.voice, "gap_s": case.gap_s,
            "words": words, "cut_off": cut_off, "wait_s": wait,
            "open_after_words_s": open_after_words, "late": late,
            "transcripts": [t.transcript for t in result.turns]}


def build_case_audio(case: Case, voices: Voices) -> tuple[FloatAudio, list[tuple[float, float]]]:
    pieces = [_silence(0.6)]
    spans: list[tuple[float, float]] = []
    position = pieces[0].size
    for index, text in enumerate(case.parts):
        if index:
            gap = _silence(case.gap_s)
            pieces.append(gap)
            position += gap.size
        said = voices.say(case.voice, text)
        spans.append((position / RATE, (position + said.size) / RATE))
        pieces.append(said)
        position += said.size
    pieces.append(_silence(2.0))
    return np.concatenate(pieces).astype(np.float32), spans


def barge_in(index: int, voices: Voices, echo: bool) -> dict[str, object]:
    """A question, a reply, the user talking over it: onset to pause, and phantom turns."""
    from app.adapters.fakes import FakeLanguageModel
    from app.cli.file_session import RoomSimulation, run_file
    from app.core.pipeline import Engines
    from app.engines import EngineChoice, build_echo_canceller, build_engines
    from app.personas import load_personas

    persona = load_personas().default
    voice = f"{VOICES[index % len(VOICES)][0]}:{VOICES[index % len(VOICES)][1]}"
    ask = voices.say(voice, FINISHED[index % len(FINISHED)])
    stop = voices.say(voice, "Stop. What time is it?")
    before, talk_at = 0.6, 0.6 + ask.size / RATE + 3.0
    audio = np.concatenate([_silence(before), ask, _silence(3.0), stop, _silence(8.0)])
    spoken = [(before, before + ask.size / RATE), (talk_at, talk_at + stop.size / RATE)]
    real = build_engines(EngineChoice())  # the real voice: its echo is what AEC must remove
    engines = Engines(real.vad, real.asr, FakeLanguageModel(
        reply="Once upon a time, by a quiet sea, there lived an old fisherman who sang "
              "every morning. His songs were about the waves and the wind and the stars.",
        token_delay_s=0.02), real.tts)
    room = RoomSimulation(delay_s=(0.02, 0.08, 0.15)[index % 3],
                          gain=(0.9, 0.6, 0.3)[index % 3]) if echo else None
    result = run_file(engines, persona, audio, max_wait_s=30.0,
                      echo=build_echo_canceller() if echo else None, room=room)
    acted = [t for t in result.turns if t.reply_text or t.heard_text or t.barge_in]
    phantoms = [t.transcript for t in acted if t.speech_start is not None and not any(
        begin - 0.4 <= t.speech_start <= end + 0.2 for begin, end in spoken)]
    stops = [s for s in result.barge_in_stops]
    return {"index": index, "echo": echo, "stop_s": min(stops) if stops else None,
            "phantoms": phantoms, "interrupted": any(t.barge_in for t in result.turns)}


def _count(items: object) -> int:
    return len(items) if isinstance(items, list) else 0


def _stats(values: list[float]) -> dict[str, float] | None:
    from bench.latency import summary

    return summary(values) if values else None


def main(args: argparse.Namespace) -> int:
    from app.adapters.silero_vad import SileroVad
    from app.adapters.whisper_asr import WhisperRecognizer
    from app.models.resolve import resolve
    from bench.latency import machine_name

    report: dict[str, object] = {"machine": machine_name(), "load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        voices = Voices(Path(tmp))
        if args.only in (None, "end-of-turn"):
            ears = (SileroVad(resolve("vad").path), WhisperRecognizer(resolve("asr").path))
            rows = []
            for case in cases(args.count):
                audio, spans = build_case_audio(case, voices)
                for words in (False, True):
                    row = end_of_turn(case, audio, spans, ears, words, args.work_ahead)
                    rows.append(row)
                    print(json.dumps(row), flush=True)
            for words, label in ((False, "before (audio model + silence)"),
                                 (True, "now (words at the pause too)")):
                mine = [r for r in rows if r["words"] is words]
                paused = [r for r in mine if r["gap_s"]]
                finished = [r for r in mine if not r["gap_s"]]
                waits = [float(r["wait_s"]) for r in finished  # type: ignore[arg-type]
                         if r["wait_s"] is not None]
                report[label] = {
                    "requests": len(mine),
                    "cut_offs": sum(bool(r["cut_off"]) for r in paused),
                    "late_ends": sum(bool(r["late"]) for r in finished),
                    "paused_requests": len(paused),
                    "finished_requests": len(finished),
                    "wait_after_finished_s": _stats(waits),
                }
        if args.only in (None, "barge-in"):
            runs = [barge_in(i, voices, echo) for i in range(args.barge_ins)
                    for echo in (False, True)]
            for run in runs:
                print(json.dumps(run), flush=True)
            for echo in (False, True):
                mine = [r for r in runs if r["echo"] is echo]
                stops = [float(r["stop_s"]) for r in mine  # type: ignore[arg-type]
                         if r["stop_s"] is not None]
                report["barge-in " + ("on loudspeakers (echo room, AEC)" if echo
                                      else "on headphones")] = {
                    "runs": len(mine),
                    "onset_to_pause_s": _stats(stops),
                    "missed": sum(r["stop_s"] is None for r in mine),
                    "phantom_turns": sum(_count(r["phantoms"]) for r in mine),
                }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text)
    return 0
