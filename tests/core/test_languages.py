from app.core.languages import base_language, language_name, script_language, speaking_language


def test_tags_reduce_to_the_base_code_engines_use() -> None:
    assert base_language("ja-JP") == "ja"
    assert base_language("zh-Hans-CN") == "zh"
    assert base_language("cmn") == "zh"
    assert base_language("en_US") == "en"
    assert base_language("") == "en"
    assert base_language(None) == "en"
    assert language_name("zh-TW") == "Chinese"


def test_script_decides_the_voice_for_cjk_text() -> None:
    assert script_language("今日はいい天気ですね。") == "ja"
    assert script_language("カタカナだけ") == "ja"
    assert script_language("今天天气很好。") == "zh"
    assert script_language("東京駅", context="ja") == "ja"  # kanji-only in a Japanese reply
    assert script_language("Hello there.") is None


def test_latin_text_keeps_the_reply_voice_unless_it_is_a_sentence() -> None:
    assert speaking_language("OK!", "ja") == "ja"
    assert speaking_language("That is a very good question indeed.", "zh") == "en"
    assert speaking_language("こんにちは", "en") == "ja"
    assert speaking_language("Fine.", "en") == "en"


def test_an_english_sentence_quoting_a_cjk_word_stays_english_and_splits_by_script() -> None:
    from app.core.languages import script_runs

    sentence = 'To say "thank you", use ありがとう (arigatou).'
    assert speaking_language(sentence, "en") == "en"  # not the Japanese voice for all of it
    assert speaking_language(sentence, "ja") == "ja"  # a Japanese reply keeps its voice
    assert script_runs(sentence) == [
        ("en", 'To say "thank you", use'), ("ja", "ありがとう"), ("en", "(arigatou).")]
    assert script_runs("Hello 你好 means hi.") == [
        ("en", "Hello"), ("zh", "你好"), ("en", "means hi.")]
    assert script_runs("東京 and 大阪 are cities.", "ja") == [
        ("ja", "東京"), ("en", "and"), ("ja", "大阪"), ("en", "are cities.")]
    assert script_runs("Fine.") == [("en", "Fine.")]
    assert script_runs("( ) ...") == []
