"""The mouth's timeline is applied at the sample the speaker plays: a real voice (Piper,
which phonemizes) through the Synthesizer stage and the playback queue, pulled in 20 ms
blocks whose play time the "device" states, and read back the way the avatar reads it
(``LipSync`` on the pipeline clock). The played audio and the mouth are compared on that
one clock."""

from __future__ import annotations

import numpy as np
import pytest

from app.adapters.piper_tts import PiperSynthesizer
from app.core.events import PipelineEvent, PlaybackEnded, ReplyChunk
from app.core.playback import PlaybackQueue
from app.core.stage_jobs import EndOfReply
from app.core.synthesizer import Synthesizer
from app.core.telemetry import ExpressionCue, MouthCue
from app.core.visemes import Viseme
from app.core.worker import LiveTurn
from app.ui.lip_sync import LEAD_S, LipSync

START = 10.0
"""When the device says the first block plays (pipeline clock)."""


class _Clock:
    def now(self) -> float:
        return 0.0


@pytest.fixture(scope="module")
def piper() -> PiperSynthesizer:
    return PiperSynthesizer()


def _speak(tts: PiperSynthesizer, texts: list[str], pause_at_block: int | None = None,
           ) -> tuple[list[PipelineEvent], np.ndarray, int]:
    events: list[PipelineEvent] = []
    playback = PlaybackQueue(tts.sample_rate, events.append)
    live = LiveTurn()
    live.turn_id = 1
    synth = Synthesizer(events.append, tts, live, _Clock(), playback)
    playback.begin(1, held=False)
    for index, text in enumerate(texts):
        synth.handle(ReplyChunk(1, index, text, 0.0))
    synth.handle(EndOfReply(1))
    block = tts.sample_rate // 50
    played: list[np.ndarray] = []
    n = 0
    while not any(isinstance(e, PlaybackEnded) for e in events) and n < 3000:
        if pause_at_block is not None and n == pause_at_block:
            playback.pause()
        if pause_at_block is not None and n == pause_at_block + 10:
            playback.resume()
        played.append(playback.pull(block, START + n * block / tts.sample_rate))
        n += 1
    return events, np.concatenate(played), block


def test_each_chunk_is_cued_at_its_first_sample_and_the_silence_after_the_last(
        piper: PiperSynthesizer) -> None:
    events, played, _ = _speak(piper, ["Maybe we could bake some bread.", "Food is good."])
    rate = piper.sample_rate
    cues = [e for e in events if isinstance(e, MouthCue)]
    starts = [e.at for e in events if isinstance(e, ExpressionCue)]
    assert [c.at for c in cues if c.track is not None] == pytest.approx(starts)
    assert all(c.offset == 0.0 for c in cues)
    assert cues[-1].track is None  # the mouth closes as the last sample ends
    sounding = np.flatnonzero(np.abs(played) > 0)
    assert cues[-1].at == pytest.approx(START + (sounding[-1] + 1) / rate, abs=1 / rate)
    first, second = (c.track for c in cues if c.track is not None)
    assert first is not None and second is not None
    assert starts[1] - starts[0] == pytest.approx(first.duration, abs=first.hop_s)
    shapes = set(first.visemes)  # "Maybe we could bake some bread": a, e, i, u at least
    assert {Viseme.A, Viseme.E, Viseme.I, Viseme.U, Viseme.CLOSED} <= shapes


def test_the_mouth_is_open_where_the_played_audio_sounds(piper: PiperSynthesizer) -> None:
    events, played, _ = _speak(piper, ["The weather is lovely today.", "Let's go for a walk."])
    rate, hop = piper.sample_rate, piper.sample_rate // 100
    lips = LipSync()
    for event in events:
        if isinstance(event, MouthCue):
            lips.cue(event)
    level = np.array([np.sqrt(np.mean(np.square(played[k:k + hop])))
                      for k in range(0, played.size - hop, hop)])
    loud = float(np.percentile(level[level > 0], 95))
    agree = total = 0
    for k, value in enumerate(level):
        if 0.02 * loud < value < 0.3 * loud:
            continue  # the edges of a sound: either reading is fair
        _shape, opening = lips.at(START + (k + 0.5) * hop / rate - LEAD_S)
        total += 1
        agree += (opening > 0) == (value >= 0.3 * loud)
    assert total > 100
    assert agree / total >= 0.95


def test_a_pause_closes_the_mouth_and_resuming_cues_the_rest_from_where_it_stopped(
        piper: PiperSynthesizer) -> None:
    events, _, block = _speak(piper, ["Maybe we could bake some bread today."],
                              pause_at_block=40)
    rate = piper.sample_rate
    cues = [e for e in events if isinstance(e, MouthCue)]
    assert [c.track is None for c in cues] == [False, True, False, True]
    assert cues[1].at == pytest.approx(START + 40 * block / rate)
    assert cues[2].at == pytest.approx(START + 50 * block / rate)
    assert cues[2].offset == pytest.approx(40 * block / rate)
    assert cues[2].track is cues[0].track
