"""A persona switch is one message carrying everything the persona sets; the pipeline
applies it on the threads that own each part (tests/pipeline covers that side)."""

from __future__ import annotations

from app.personas.model import Persona
from app.personas.switch import persona_switch


def _persona() -> Persona:
    return Persona.model_validate({
        "id": "yui", "name": "Yui", "system_prompt": "You are Yui.", "language": "ja-JP",
        "languages": ["ja", "en"],
        "voice": {"kokoro": "jf_alpha", "speed": 1.2},
        "llm": {"temperature": 0.4, "reply_sentences": 2},
        "acknowledgement": {"after_s": 2.0, "phrases": ["えっと、"]},
    })


def test_a_switch_carries_the_personas_languages_voice_sampling_and_phrases() -> None:
    persona = _persona()
    message = persona_switch(persona, fresh_conversation=True, speed_factor=0.5)
    assert message.languages == persona.spoken_languages() and message.languages[0] == "ja"
    assert message.prompt == persona.full_system_prompt()
    assert (message.voice, message.speed) == ("jf_alpha", 0.6)
    assert (message.temperature, message.max_sentences) == (0.4, 2)
    assert message.acknowledgement_after_s == 2.0
    assert message.acknowledgement_phrases == ("えっと、",)


def test_the_app_keeps_its_loaded_conversation_and_a_voice_chosen_in_settings() -> None:
    message = persona_switch(_persona(), fresh_conversation=False, own_voice=False)
    assert message.prompt is None and message.voice is None
    assert message.speed == 1.2
