"""A persona as the one message the pipeline takes when it switches to it."""

from __future__ import annotations

from app.core.runtime.messages import UsePersona
from app.personas.model import Persona


def persona_switch(persona: Persona, *, fresh_conversation: bool, own_voice: bool = True,
                   speed_factor: float = 1.0) -> UsePersona:
    """Everything the persona sets. ``fresh_conversation``: start an empty conversation
    with its prompt (the app instead loads the saved one); ``own_voice`` False keeps a
    voice the user chose in the settings; ``speed_factor`` is the user's speech speed."""
    ack = persona.acknowledgement
    return UsePersona(
        languages=persona.spoken_languages(),
        prompt=persona.full_system_prompt() if fresh_conversation else None,
        voice=persona.voice.kokoro if own_voice else None,
        speed=speed_factor * persona.voice.speed,
        temperature=persona.llm.temperature,
        max_sentences=persona.llm.reply_sentences,
        acknowledgement_after_s=ack.after_s,
        acknowledgement_phrases=tuple(ack.phrases_for(persona.language)),
        tool_waiting_lines=tuple(ack.tool_lines_for(persona.language)),
        names=(persona.name,),
    )
