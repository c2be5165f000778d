"""What a persona says when it cannot answer: its language model (or the server it runs
on) failed in the middle of a turn.

A voice companion that goes silent, or reads out an error, breaks the conversation; a
person who lost their thread says so and asks again. The apology is spoken in the
language the reply was to be in, as the reply's last chunk (what was already said
stays), and the technical reason goes to the window's notices or ``hanasu run``'s stderr
(``telemetry.ReplyFailed``), never into the spoken line.
"""

from __future__ import annotations

from app.core.languages import base_language

APOLOGIES: dict[str, str] = {
    "en": "Sorry, I lost my train of thought. Could you say that again?",
    "ja": "ごめんなさい、ちょっと考えがまとまらなくて。もう一度言ってもらえますか？",
    "zh": "不好意思，我刚才走神了。你能再说一遍吗？",
}
"""Per base language code; a language without its own falls back to English."""


def apology(language: str | None) -> str:
    """The apology in ``language`` ("ja-JP" and "ja" alike; English when unknown)."""
    return APOLOGIES.get(base_language(language), APOLOGIES["en"])
