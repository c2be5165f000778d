"""The transcript reveals the reply in step with playback and splits heard from unheard."""

from __future__ import annotations

from app.ui.transcript_model import TranscriptModel


def test_words_appear_with_the_playback_clock() -> None:
    model = TranscriptModel()
    model.confirmed(1)
    for i, text in enumerate(["Hello there.", "How are you today?"]):
        model.token(1, text if i == 0 else " " + text)
        model.chunk_audio(1, i, text, 1.0)
    entry = model.playback_started(1, at=10.0)
    assert entry.spoken() == ""
    model.playback_position(10.5)
    assert entry.spoken() == "Hello"
    model.playback_position(11.5)
    assert entry.spoken() == "Hello there. How are"
    model.playback_ended(1, "Hello there. How", interrupted=True)
    assert entry.spoken() == "Hello there. How"
    assert entry.unheard() == "are you today?"


def test_speculative_turn_cancelled_is_dropped() -> None:
    model = TranscriptModel()
    model.transcript(3, "half a sentence")
    model.cancelled(3)
    assert model.turns == {}
    model.confirmed(4)
    model.cancelled(4)  # a confirmed turn stays (barge-in keeps what was said)
    assert [t.turn_id for t in model.visible()] == [4]


def test_hud_rows_are_chronological() -> None:
    from app.core.metrics import TurnTimeline
    from app.ui.hud import headline, stage_rows

    turn = TurnTimeline(turn_id=1, speech_end=1.0, end_of_turn=1.48, asr_final=1.2,
                        llm_first_token=1.5, first_sample_played=1.9, confirmed=True)
    rows = stage_rows(turn)
    assert [r[0] for r in rows] == ["transcript", "end of turn confirmed", "first token",
                                    "first sound"]
    assert rows[0][1] == "+200 ms"
    assert headline(turn) == "Turn 1: 900 ms voice-to-voice"
