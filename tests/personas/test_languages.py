"""A persona's languages: the main one it speaks, the others it may hear and answer in
(auto mode), its character rules in its own language, and the per-turn language note."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.character import breaks_character
from app.core.languages import SPEECH_LANGUAGES, reply_language_note
from app.personas import load_persona_file, load_personas
from app.personas.card_export import card_json
from app.personas.card_file import parse_card
from app.personas.cards import card_to_persona
from app.personas.model import (
    CHARACTER_RULES,
    LANGUAGE_NAMES,
    Persona,
    languages_for,
)
from app.personas.rules import CHARACTER_RULES_JA, CHARACTER_RULES_ZH
from app.personas.writer import persona_to_toml, save_persona

LIBRARY = load_personas()
MINIMAL = 'id = "p"\nname = "P"\nsystem_prompt = "You are P."\n'


def persona(**fields: object) -> Persona:
    return Persona.model_validate({"id": "p", "name": "P", "system_prompt": "You are P.",
                                   **fields})


def test_default_is_just_the_main_language_as_a_base_code() -> None:
    assert persona().spoken_languages() == ("en",)
    assert persona(language="ja-JP").spoken_languages() == ("ja",)
    assert persona(language="zh-Hans-CN").spoken_languages() == ("zh",)
    assert not persona(language="ja").auto_language
    assert persona(language="es").spoken_languages() == ("es",)  # any main language


def test_several_languages_mean_auto_mode_and_are_normalised() -> None:
    tutor = persona(languages=["en", "ja-JP", "cmn"])
    assert tutor.spoken_languages() == ("en", "ja", "zh")
    assert tutor.auto_language
    assert hash(tutor) == hash(persona(languages=["en", "ja", "zh"]))  # still hashable


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"ja"', 'languages: expected a list like ["en", "ja"], got the text \'ja\''),
        ("5", 'languages: expected a list like ["en", "ja"], got int'),
        ('["ja", "en"]', "languages: the first must be the persona's language 'en' (got 'ja')"),
        ('["en", "fr"]', "languages: 'fr' is not one the app can hear and speak (en, ja, zh)"),
        ('["en", "ja", "ja-JP"]', "languages: 'ja-JP' is listed twice"),
        ("[1]", "languages.0: Input should be a valid string"),
    ],
)
def test_a_malformed_list_skips_the_persona_with_one_line(
    tmp_path: Path, value: str, message: str
) -> None:
    path = tmp_path / "p.toml"
    path.write_text(MINIMAL + f"languages = {value}\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        load_persona_file(path)
    assert str(caught.value) == f"{path}: {message}"
    library = load_personas(tmp_path)
    assert "p" not in {p.id for p in library.personas}
    [problem] = library.problems
    assert problem.endswith(message) and "\n" not in problem


def test_languages_round_trip_through_toml_and_stay_implicit_by_default(
    tmp_path: Path,
) -> None:
    tutor = persona(languages=["en", "ja", "zh"])
    assert 'languages = [\n    "en",\n    "ja",\n    "zh",\n]' in persona_to_toml(tutor)
    assert load_persona_file(save_persona(tutor, tmp_path)) == tutor
    plain = persona(language="ja")
    assert "languages" not in persona_to_toml(plain)
    assert load_persona_file(save_persona(plain, tmp_path)) == plain


def test_languages_travel_in_a_character_card() -> None:
    riko = LIBRARY.get("riko")
    back = card_to_persona(parse_card(_card_bytes(card_json(riko, 3))), "riko")
    assert back.spoken_languages() == ("en", "ja", "zh")
    broken = card_json(riko, 3)
    broken["data"]["extensions"]["hanasu"]["languages"] = ["ja", "klingon"]
    assert card_to_persona(parse_card(_card_bytes(broken)), "x").spoken_languages() == ("en",)


def _card_bytes(card: dict[str, object]) -> bytes:
    import json

    return json.dumps(card, ensure_ascii=False).encode("utf-8")


def test_the_editor_keeps_the_list_starting_with_a_newly_picked_language() -> None:
    assert languages_for("ja", ["en", "ja", "zh"]) == ["ja", "en", "zh"]
    assert languages_for("zh-CN", ["en"]) == ["zh"]
    assert languages_for("es", ["en", "ja"]) == ["es"]  # Spanish cannot switch: no ASR


def test_one_table_of_language_names() -> None:
    from app.core import languages

    assert LANGUAGE_NAMES is languages.LANGUAGE_NAMES


def test_japanese_and_chinese_personas_get_their_rules_in_their_language() -> None:
    yui, ming = LIBRARY.get("yui"), LIBRARY.get("ming")
    assert yui.spoken_languages() == ("ja",) and ming.spoken_languages() == ("zh",)
    yui_prompt, ming_prompt = yui.full_system_prompt(), ming.full_system_prompt()
    assert CHARACTER_RULES_JA in yui_prompt and CHARACTER_RULES not in yui_prompt
    assert yui_prompt.endswith("必ず日本語で答えてください。")
    assert CHARACTER_RULES_ZH in ming_prompt and CHARACTER_RULES not in ming_prompt
    assert ming_prompt.endswith("请始终用中文（简体）回答。")
    for rules in (CHARACTER_RULES_JA, CHARACTER_RULES_ZH):
        assert "AI" in rules  # the "are you an AI?" deflection is there
        assert breaks_character(rules)  # a model parroting its rules is not spoken


def test_the_tutor_answers_a_japanese_or_chinese_sentence_in_kind() -> None:
    riko = LIBRARY.get("riko")
    assert riko.auto_language and riko.spoken_languages() == ("en", "ja", "zh")
    prompt = riko.full_system_prompt()
    assert "Answer in the language the user speaks (English, Japanese or Chinese)" in prompt
    assert "back into English" in riko.system_prompt
    assert prompt.endswith(CHARACTER_RULES)


def test_a_multilingual_japanese_persona_says_so_in_japanese() -> None:
    prompt = persona(language="ja", languages=["ja", "en"]).full_system_prompt()
    assert "相手が話している言語（日本語、英語）で答えてください。" in prompt
    assert "必ず日本語で" not in prompt


def language_note(code: str) -> str:
    return reply_language_note(code).strip()


def test_the_per_turn_note_is_short_and_in_the_language_heard() -> None:
    assert language_note("ja-JP") == "（ユーザーは日本語で話しています。日本語で答えてください。）"
    assert "中文" in language_note("zh")
    assert "English" in language_note("en")
    for code in SPEECH_LANGUAGES:
        assert 0 < len(language_note(code)) <= 60 and "\n" not in language_note(code)


def test_the_chinese_and_japanese_builtins_greet_in_their_language() -> None:
    from app.core.languages import script_language

    assert script_language(LIBRARY.get("yui").greeting) == "ja"
    assert script_language(LIBRARY.get("ming").greeting) == "zh"
