"""The transcript made at the utterance's first quiet frame, ahead of the pause: when the
endpointer calls that frame, when the recognizer's stage uses what it made, and when not."""

from __future__ import annotations

import numpy as np

from app.adapters.fakes import FakeRecognizer
from app.core.endpointing import EndpointConfig, Endpointer
from app.core.events import SpeechPaused, Transcript
from app.core.stage_jobs import SetLanguages, TranscribeAhead
from app.core.transcriber import Transcriber
from app.core.transcript_ahead import AheadTranscript, TranscriptsAhead
from app.core.turn_commands import StartTurn
from app.core.worker import LiveTurn

FRAME = 512  # 32 ms at 16 kHz
PAUSE_TAIL = 1536  # the 96 ms pause


def _voice(seconds: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.1, int(seconds * 16_000)).astype(np.float32)


def _quiet(frames: int) -> np.ndarray:
    return np.zeros(frames * FRAME, np.float32)


def _feed(endpointer: Endpointer, probabilities: list[float]) -> list[int]:
    """Frame indexes at which the endpointer said the utterance went quiet."""
    quiet = []
    for index, probability in enumerate(probabilities):
        endpointer.feed(np.full(FRAME, 0.01 * index, np.float32), probability)
        if endpointer.went_quiet:
            quiet.append(index)
    return quiet


def test_the_first_quiet_frame_of_each_silence_is_called_once_before_the_pause() -> None:
    endpointer = Endpointer(EndpointConfig(min_speech_ms=96, pause_ms=96))
    # speech, a one-frame dip, speech, then the pause: two quiet moments, one per silence
    probabilities = [0.9] * 10 + [0.0] + [0.9] * 5 + [0.0] * 6
    assert _feed(endpointer, probabilities) == [10, 16]


def test_nothing_is_called_quiet_before_speech_counts_or_when_turned_off() -> None:
    # a blip too short to be speech: no utterance, nothing to transcribe
    assert _feed(Endpointer(EndpointConfig(min_speech_ms=160)), [0.9, 0.9, 0.0, 0.0]) == []
    off = Endpointer(EndpointConfig(min_speech_ms=96, early_transcript_ms=0))
    assert _feed(off, [0.9] * 10 + [0.0] * 6) == []


def test_the_quiet_frames_audio_is_the_pauses_audio_minus_its_last_frames() -> None:
    endpointer = Endpointer(EndpointConfig(min_speech_ms=96, pause_ms=96))
    so_far = None
    paused = None
    for index, probability in enumerate([0.9] * 10 + [0.0] * 4):
        events = endpointer.feed(np.full(FRAME, 0.01 * index, np.float32), probability)
        if endpointer.went_quiet:
            so_far = endpointer.utterance_so_far()
        paused = next((e for e in events if isinstance(e, SpeechPaused)), paused)
    assert so_far is not None and paused is not None
    assert paused.audio.size - so_far.size == 2 * FRAME  # the two quiet frames after it
    assert np.array_equal(paused.audio[: so_far.size], so_far)


def test_a_turn_takes_the_transcript_made_on_its_audio_and_only_once() -> None:
    words = _voice(1.0)
    ahead = TranscriptsAhead(PAUSE_TAIL)
    ahead.keep(AheadTranscript(words, "hello there.", "en"))
    taken = ahead.take(np.concatenate([words, _quiet(2)]))
    assert taken is not None and taken.text == "hello there."
    assert ahead.take(np.concatenate([words, _quiet(2)])) is None


def test_audio_that_grew_or_differs_is_transcribed_again() -> None:
    words = _voice(1.0)
    ahead = TranscriptsAhead(PAUSE_TAIL)
    ahead.keep(AheadTranscript(words, "hello", "en"))
    assert ahead.take(np.concatenate([words, _voice(0.5, seed=1)])) is None  # voice went on
    ahead.keep(AheadTranscript(words, "hello", "en"))
    other = _voice(1.0, seed=2)  # another utterance altogether
    assert ahead.take(np.concatenate([other, _quiet(2)])) is None
    ahead.keep(AheadTranscript(words, "hello", "en"))
    assert ahead.take(words[:-FRAME]) is None  # shorter than what was transcribed


class _Clock:
    def now(self) -> float:
        return 2.0


def _stage(texts: list[str]) -> tuple[Transcriber, FakeRecognizer, list[object], LiveTurn]:
    recognizer = FakeRecognizer(texts)
    published: list[object] = []
    live = LiveTurn()
    live.turn_id = 3
    return Transcriber(published.append, recognizer, live, _Clock()), recognizer, published, live


def _transcripts(published: list[object]) -> list[str]:
    return [event.text for event in published if isinstance(event, Transcript)]


def test_the_pauses_turn_is_answered_from_the_transcript_made_ahead() -> None:
    stage, recognizer, published, _live = _stage(["what time is it?", "something else"])
    words = _voice(1.2)
    stage.handle(TranscribeAhead(words))
    stage.handle(StartTurn(3, np.concatenate([words, _quiet(2)]), held=True))
    assert _transcripts(published) == ["what time is it?"]
    assert recognizer.calls == 1  # the turn itself needed no second pass
    assert (stage.ahead.made, stage.ahead.used) == (1, 1)
    stage.voices.close()


def test_a_voice_that_went_on_is_transcribed_whole() -> None:
    stage, recognizer, published, _live = _stage(["what time", "what time is it in Tokyo?"])
    words = _voice(1.2)
    stage.handle(TranscribeAhead(words))
    stage.handle(StartTurn(3, np.concatenate([words, _voice(0.8, seed=4), _quiet(3)]),
                           held=True))
    assert _transcripts(published) == ["what time is it in Tokyo?"]
    assert recognizer.calls == 2
    stage.voices.close()


def test_work_ahead_is_dropped_when_the_turn_already_waits_behind_it() -> None:
    stage, recognizer, published, _live = _stage(["tell me a joke."])
    words = _voice(1.0)
    stage.inbox.put(StartTurn(3, np.concatenate([words, _quiet(2)]), held=True))
    stage.handle(TranscribeAhead(words))
    assert recognizer.calls == 0  # the waiting turn transcribes it, once
    stage.handle(stage.inbox.get_nowait())
    assert _transcripts(published) == ["tell me a joke."]
    assert recognizer.calls == 1
    stage.voices.close()


def test_a_change_of_languages_forgets_what_was_heard_ahead() -> None:
    stage, _recognizer, published, _live = _stage(["hello.", "konnichiwa."])
    words = _voice(1.0)
    stage.handle(TranscribeAhead(words))
    stage.handle(SetLanguages(("ja",)))
    stage.handle(StartTurn(3, np.concatenate([words, _quiet(2)]), held=True))
    assert _transcripts(published) == ["konnichiwa."]
    stage.voices.close()


def test_a_failure_ahead_is_left_to_the_turn_to_report() -> None:
    class Broken(FakeRecognizer):
        def transcribe(self, audio: np.ndarray) -> str:
            raise RuntimeError("decoder out of memory")

    published: list[object] = []
    stage = Transcriber(published.append, Broken(["x"]), LiveTurn(), _Clock())
    stage.handle(TranscribeAhead(_voice(1.0)))
    assert published == [] and stage.ahead.made == 0
    stage.voices.close()
