"""What the window shows of languages: the HUD names the language heard (in English,
like the rest of the window), and a voice's fallback notice from the TTS thread reaches
the notice area."""

from __future__ import annotations

from dataclasses import replace

from pytestqt.qtbot import QtBot

from app.core.metrics import TurnTimeline
from app.core.pipeline import VoicePipeline, llm_language_notice
from app.core.telemetry import EngineNotice, TurnTimed
from app.personas.loader import PersonaLibrary
from app.ui.hud import NOT_REACHED, SAME_AS_FIRST_SOUND, stage_rows
from app.ui.window import MainWindow
from tests.ui.conftest import fake_engines


def test_hud_names_the_language_heard() -> None:
    turn = TurnTimeline(turn_id=3, speech_end=1.0, asr_final=1.2, language="ja")
    assert ("language heard", "Japanese") in stage_rows(turn)
    assert ("language heard", "Chinese") in stage_rows(TurnTimeline(1, speech_end=0.0,
                                                                    language="zh"))
    unknown = stage_rows(TurnTimeline(2, speech_end=0.0))
    assert ("language heard", NOT_REACHED) in unknown


def test_engine_notices_reach_the_notice_area(qtbot: QtBot, window: MainWindow) -> None:
    message = "The Japanese voice could not load (missing file); eSpeak speaks Japanese instead"
    window.bridge.post(EngineNotice(message, 1.0))
    qtbot.waitUntil(lambda: message in window.notices.messages, timeout=3_000)


def test_hud_shows_the_language_of_a_timed_turn(qtbot: QtBot, window: MainWindow) -> None:
    timeline = TurnTimeline(turn_id=7, speech_end=1.0, asr_final=1.1, language="zh")
    window.bridge.post(TurnTimed(7, timeline))
    qtbot.waitUntil(lambda: window.hud.title.text().startswith("Turn 7"), timeout=3_000)
    assert window.hud.values["language heard"].text() == "Chinese"


def test_a_persona_the_embedded_model_cannot_speak_for_says_so(
        qtbot: QtBot, window: MainWindow, library: PersonaLibrary) -> None:
    """Yui on SmolLM2 (English only) would babble: the window says what to get instead,
    and English personas say nothing."""
    engines = replace(fake_engines(), llm_languages=("en",))
    pipe = VoicePipeline(engines, window.persona.full_system_prompt())
    pipe.add_observer(window.bridge.post)
    pipe.start()
    try:
        window.attach_pipeline(pipe)
        assert not any("built-in language model" in m for m in window.notices.messages)
        window.sidebar.persona_selected.emit(library.get("yui"))
        [notice] = [m for m in window.notices.messages if "built-in language model" in m]
        assert notice.startswith("Yui speaks Japanese") and "Gemma 4" in notice
        window.sidebar.persona_selected.emit(library.get("riko"))
        assert any(m.startswith("Riko speaks Japanese and Chinese")
                   for m in window.notices.messages)
    finally:
        window.detach_pipeline()
        pipe.stop()


def test_no_language_notice_when_the_model_speaks_any_language() -> None:
    engines = fake_engines()  # llm_languages None: a downloaded or server model
    assert llm_language_notice(engines, "Yui", ["ja"]) is None
    english_only = replace(engines, llm_languages=("en",))
    assert llm_language_notice(english_only, "Kai", ["en-US"]) is None
    assert "Chinese" in (llm_language_notice(english_only, "Ming", ["zh"]) or "")


def test_hud_shows_the_answer_after_an_acknowledgement() -> None:
    turn = TurnTimeline(turn_id=4, speech_end=1.0, first_sample_played=2.2,
                        acknowledgement="Hmm,", answer_played=2.9)
    rows = dict(stage_rows(turn))
    assert rows["first sound"] == "+1200 ms" and rows["first answer word"] == "+1900 ms"
    plain = dict(stage_rows(TurnTimeline(turn_id=5, speech_end=1.0, first_sample_played=1.8)))
    assert plain["first answer word"] == SAME_AS_FIRST_SOUND  # the row stays in its place


def test_hud_forgets_the_previous_personas_turn_on_a_switch(qtbot: QtBot,
                                                             window: MainWindow) -> None:
    from app.ui.hud import NO_TURN

    window.bridge.post(TurnTimed(3, TurnTimeline(turn_id=3, speech_end=1.0, asr_final=1.1,
                                                 language="ja")))
    qtbot.waitUntil(lambda: window.hud.title.text().startswith("Turn 3"), timeout=3_000)
    other = next(p for p in window.library.personas if p.id != window.persona.id)
    window.sidebar.select(other.id)
    assert window.persona.id == other.id
    assert window.hud.title.text() == NO_TURN
    assert window.hud.values["language heard"].text() == NOT_REACHED
