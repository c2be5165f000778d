"""A labelled set of spoken sentences for ``hanasu bench asr``, made on this machine.

Several voices (espeak-ng accents at different speeds, and the embedded Piper voice),
0.8-15 s long, clean and with white or pink noise at 10-20 dB SNR. Everything is
seeded, so the same set comes back on every machine; it is cached, because making it
takes longer than transcribing it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from app.core.events import FloatAudio

RATE = 16_000
SET_VERSION = 1

SENTENCES = [
    "Hello there.",
    "Good morning.",
    "Why is the sky blue?",
    "What time is it?",
    "Turn the music down please.",
    "What is the capital of Australia?",
    "Can you tell me a joke?",
    "What should I cook for dinner tonight?",
    "Remind me to call my sister tomorrow morning.",
    "How far away is the moon from the earth?",
    "What is a good name for a grey kitten?",
    "Summarize the plot of Romeo and Juliet in one sentence.",
    "I would like to learn how to play the guitar this summer.",
    "Tell me something interesting about the deep ocean.",
    "How do I stay focused when I work from home all day?",
    "The weather has been cold and rainy for the whole week.",
    "Please explain how a rainbow forms after a summer storm.",
    "My favorite books are the ones with a mystery at the center.",
    "Could you recommend a quiet place to read near the river?",
    "What makes a good friend, and how do you keep one for many years?",
    "I went to the market this morning and bought apples, bread, cheese and fresh flowers.",
    "When I was a child we spent every summer at a small house by the lake with my grandparents.",
    "Before you answer, think about the question carefully, and then give me a short and "
    "simple reply that a child could understand.",
    "Yesterday the train was late again, so I missed the meeting, and my manager asked me "
    "to send a written summary of everything I planned to say.",
    "The history of the city goes back many centuries, and the old bridge across the "
    "river was built by merchants who traded wool, salt and wine with distant ports.",
    "If you could travel anywhere in the world for one month, with no worries about money "
    "or time, where would you go first, and what would you want to see when you arrived "
    "there?",
    "Do you like music?",
    "Where would you like to travel?",
    "Let us talk about something else now.",
    "Stop.",
    "Thank you very much.",
    "How many legs does a spider have?",
    "Is it going to rain this afternoon?",
    "Please read me the news headlines.",
    "What is the difference between a frog and a toad?",
    "Set a timer for the pasta.",
]

VOICES = [
    ("espeak", "en-us", 140),
    ("espeak", "en-gb", 170),
    ("piper", "joe", 0),
    ("espeak", "en-gb-scotland", 155),
    ("espeak", "en-029", 130),
    ("espeak", "en-gb-x-rp", 185),
]
"""(engine, voice, words per minute; 0 = the voice's own pace)."""

NOISES = [("none", 0.0), ("white", 20.0), ("pink", 15.0), ("none", 0.0), ("white", 10.0)]
"""(kind, SNR in dB) cycled over the renditions."""


@dataclass(frozen=True)
class Utterance:
    """One labelled clip: ``name``.wav holds ``text`` spoken as described."""

    name: str
    text: str
    voice: str
    noise: str
    snr_db: float
    seconds: float


def plan() -> list[tuple[str, str, tuple[str, str, int], tuple[str, float]]]:
    """Every sentence twice, each time in another voice and noise condition."""
    rows = []
    for index, text in enumerate(SENTENCES):
        for take in range(2):
            voice = VOICES[(index + 3 * take) % len(VOICES)]
            noise = NOISES[(2 * index + take) % len(NOISES)]
            rows.append((f"u{index:02d}{'ab'[take]}", text, voice, noise))
    return rows


def add_noise(speech: FloatAudio, kind: str, snr_db: float, seed: int) -> FloatAudio:
    """``speech`` plus white or pink noise at ``snr_db`` below the speech's power
    (measured over its audible part, so leading/trailing silence does not lower it)."""
    if kind == "none":
        return speech
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(speech.size)
    if kind == "pink":  # 1/f power: scale the spectrum by 1/sqrt(f)
        spectrum = np.fft.rfft(noise)
        freqs = np.fft.rfftfreq(noise.size)
        freqs[0] = freqs[1] if freqs.size > 1 else 1.0
        noise = np.fft.irfft(spectrum / np.sqrt(freqs), n=noise.size)
    audible = speech[np.abs(speech) > 0.01]
    power = float(np.mean(np.square(audible))) if audible.size else 1e-6
    noise *= np.sqrt(power / 10 ** (snr_db / 10) / float(np.mean(np.square(noise))))
    return np.clip(speech + noise, -1.0, 1.0).astype(np.float32)


def set_key() -> str:
    """Changes whenever the sentences, voices or noise change: a stale cache is not reused."""
    blob = json.dumps([SET_VERSION, plan()], sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def load_or_build(cache: Path) -> list[tuple[Utterance, FloatAudio]]:
    """The labelled set from ``cache`` (built there first if missing)."""
    from app.adapters.file_audio import read_audio

    folder = cache / f"asr-set-{set_key()}"
    index = folder / "labels.json"
    if not index.is_file():
        _build(folder)
    labels = [Utterance(**row) for row in json.loads(index.read_text())]
    return [(u, read_audio(folder / f"{u.name}.wav")) for u in labels]


def _build(folder: Path) -> None:
    from app.adapters.file_audio import read_audio, write_audio
    from app.adapters.resample import resample

    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise RuntimeError("espeak-ng is needed to make the ASR set (apt-get install espeak-ng)")
    piper = None
    tmp_folder = folder.with_name(folder.name + ".part")
    tmp_folder.mkdir(parents=True, exist_ok=True)
    labels = []
    pad = np.zeros(int(0.3 * RATE), np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        for seed, (name, text, (engine, voice, wpm), (kind, snr)) in enumerate(plan()):
            if engine == "piper":
                if piper is None:
                    from app.adapters.piper_tts import PiperSynthesizer

                    piper = PiperSynthesizer()
                speech = resample(piper.synthesize(text), piper.sample_rate, RATE)
            else:
                raw = Path(tmp) / "say.wav"
                command = [espeak, "-v", voice, "-s", str(wpm), "-w", str(raw), text]
                subprocess.run(command, check=True, capture_output=True)
                speech = read_audio(raw)
            audio = add_noise(np.concatenate([pad, speech, pad]), kind, snr, seed)
            write_audio(tmp_folder / f"{name}.wav", audio, RATE)
            labels.append(
                Utterance(name, text, f"{engine}:{voice}:{wpm}", kind, snr, audio.size / RATE)
            )
    (tmp_folder / "labels.json").write_text(json.dumps([asdict(u) for u in labels], indent=1))
    if folder.exists():
        shutil.rmtree(folder)
    tmp_folder.rename(folder)
