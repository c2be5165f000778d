"""A voice's padding before a chunk is cut (before the first words it is only waiting);
the sound itself, its soft onset and the pause after it are kept."""

from __future__ import annotations

import time

import numpy as np

from app.core.events import PipelineEvent, ReplyChunk, SpeechAudio
from app.core.playback import PlaybackQueue
from app.core.synthesizer import Synthesizer
from app.core.voice_edges import LEAD_IN_S, trim_silence, without_lead
from app.core.worker import LiveTurn

RATE = 24_000
PAD_S = 0.17  # the padding some of Kokoro's voices put before a chunk
TAIL_S = 0.25  # and after it


def _padded_word(onset: float = 0.3) -> np.ndarray:
    """A 0.4 s tone after ``PAD_S`` of near-silence (a voice's dither), then ``TAIL_S``."""
    t = np.arange(int(0.4 * RATE), dtype=np.float32) / RATE
    word = onset * np.sin(2 * np.pi * 180 * t).astype(np.float32)
    dither = np.full(int(PAD_S * RATE), 2e-4, np.float32)
    return np.concatenate([dither, word, np.zeros(int(TAIL_S * RATE), np.float32)])


def test_the_padding_before_the_first_sound_is_cut_to_a_short_lead_in() -> None:
    audio = _padded_word()
    trimmed = without_lead(audio, RATE)
    assert trimmed.size == audio.size - int(PAD_S * RATE) + int(LEAD_IN_S * RATE) - 1
    first = int(np.flatnonzero(np.abs(trimmed) > 1e-3)[0])
    assert first / RATE <= LEAD_IN_S + 0.001
    assert np.array_equal(trimmed[-int(TAIL_S * RATE):], audio[-int(TAIL_S * RATE):])


def test_a_soft_onset_is_sound_not_padding() -> None:
    """A breathy "h" at -50 dBFS starts the chunk; it is kept."""
    breath = np.full(int(0.05 * RATE), 3e-3, np.float32)
    audio = np.concatenate([np.zeros(int(0.1 * RATE), np.float32), breath, _padded_word()])
    trimmed = without_lead(audio, RATE)
    assert trimmed.size == audio.size - int(0.1 * RATE) + int(LEAD_IN_S * RATE)


def test_silence_or_nothing_stays_as_it_is() -> None:
    silence = np.zeros(RATE // 2, np.float32)
    assert without_lead(silence, RATE).size == silence.size
    assert without_lead(np.zeros(0, np.float32), RATE).size == 0
    assert trim_silence(silence, RATE).size == 0


class _PaddedVoice:
    sample_rate = RATE

    def synthesize(self, text: str) -> np.ndarray:
        return _padded_word()


class _Clock:
    def now(self) -> float:
        return time.monotonic()


def test_the_voice_stage_queues_each_chunk_without_its_padding() -> None:
    """What the speaker plays first is the word, not a fifth of a second of padding, for the
    first chunk and the ones after it; the mouth and the echo reference see the same audio."""
    events: list[PipelineEvent] = []
    live = LiveTurn()
    live.turn_id = 1
    playback = PlaybackQueue(RATE, events.append)
    playback.begin(1, held=False)
    stage = Synthesizer(events.append, _PaddedVoice(), live, _Clock(), playback)
    for index, text in enumerate(("Well,", "here it is.")):
        stage.handle(ReplyChunk(1, index, text, 0.0))
    played = playback.pull(int(0.05 * RATE))
    assert np.abs(played[: int(0.01 * RATE)]).max() > 0.1  # the word within 10 ms
    spoken = [event.samples for event in events if isinstance(event, SpeechAudio)]
    assert len(spoken) == 2
    assert all(abs(s.size / RATE - (0.4 + TAIL_S + LEAD_IN_S)) < 0.002 for s in spoken)
