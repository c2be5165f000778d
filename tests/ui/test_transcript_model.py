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


def test_hud_rows_keep_their_order_and_number_from_turn_to_turn() -> None:
    from app.core.metrics import TurnTimeline
    from app.ui.hud import NOT_REACHED, ROW_NAMES, headline, stage_rows

    turn = TurnTimeline(turn_id=1, speech_end=1.0, end_of_turn=1.48, asr_final=1.2,
                        llm_first_token=1.5, first_sample_played=1.9, confirmed=True)
    rows = dict(stage_rows(turn))
    assert [name for name, _ in stage_rows(turn)] == list(ROW_NAMES)
    assert rows["transcript"] == "+200 ms" and rows["end of turn confirmed"] == "+480 ms"
    assert rows["first chunk"] == NOT_REACHED and rows["language heard"] == NOT_REACHED
    # a turn whose transcript came after the end of turn: same rows, same places
    later = TurnTimeline(turn_id=2, speech_end=1.0, end_of_turn=1.1, asr_final=1.3,
                         prefix_reused=True, language="en")
    assert [name for name, _ in stage_rows(later)] == list(ROW_NAMES)
    assert headline(turn) == "Turn 1: 900 ms voice-to-voice"


def test_a_reply_talked_over_before_its_first_word_says_so() -> None:
    from app.ui.transcript import reply_html

    model = TranscriptModel()
    model.confirmed(1)
    entry = model.playback_ended(1, "", interrupted=True)  # no token, nothing heard
    assert "interrupted" in reply_html(entry) and "…" not in reply_html(entry)
    model.confirmed(2)
    waiting = model.token(2, "")  # still thinking: the dots stay
    assert "…" in reply_html(waiting)
