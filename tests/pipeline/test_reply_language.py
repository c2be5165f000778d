"""A persona's languages reach the recognizer and the voices, the language heard picks
the reply's language (auto mode), and CJK text is never handed to an English voice."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from app.adapters.fakes import FakeLanguageModel, FakeRecognizer, FakeSynthesizer, FakeVoiceActivity
from app.core.events import FloatAudio, PipelineEvent, PlaybackEnded, Transcript
from app.core.languages import script_runs
from app.core.pipeline import Engines, VoicePipeline
from app.core.ports import ChatMessage, PromptStats
from app.core.runtime.messages import UsePersona
from app.core.telemetry import EngineNotice
from tests.pipeline.conftest import silence, voiced

BLOCK = 512


class HearsLanguages(FakeRecognizer):
    """Scripted transcripts, each with the language Whisper would report."""

    def __init__(self, heard: Sequence[tuple[str, str]]) -> None:
        super().__init__([text for text, _ in heard])
        self._languages = [language for _, language in heard]
        self.last_language: str | None = None
        self.allowed: list[tuple[str, ...]] = []

    def set_languages(self, languages: Sequence[str]) -> None:
        self.allowed.append(tuple(languages))

    def transcribe(self, audio: FloatAudio) -> str:
        index = min(self._next, len(self._languages) - 1)
        text = super().transcribe(audio)
        self.last_language = self._languages[index] if text else None
        return text


class SpeaksLanguages(FakeSynthesizer):
    """Records which language each text was spoken in, and reports one notice."""

    def __init__(self) -> None:
        super().__init__()
        self.language = "en"
        self.spoken: list[tuple[str, str]] = []
        self.prepared: list[tuple[str, ...]] = []
        self._notices = ["Japanese voice unavailable; eSpeak speaks Japanese instead"]

    def use_language(self, language: str) -> None:
        self.language = language

    def prepare(self, languages: Sequence[str]) -> None:
        self.prepared.append(tuple(languages))

    def take_notices(self) -> list[str]:
        notices, self._notices = self._notices, []
        return notices

    def synthesize(self, text: str) -> FloatAudio:
        if self.language == "en":  # as the app's voice port: a quoted CJK word in its voice
            self.spoken.extend(script_runs(text))
        else:
            self.spoken.append((self.language, text))
        return super().synthesize(text)


class StreamsCharacters(FakeLanguageModel):
    """One character per token, as a CJK reply streams from a real model."""

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        for piece in super().stream(messages, cancelled, on_prompt):
            yield from piece


def _run_until(condition: Callable[[], bool], pipeline: VoicePipeline, mic: np.ndarray,
               timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    position = 0
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        pipeline.pull_audio(BLOCK)
        if position < mic.size:
            pipeline.push_audio(mic[position:position + BLOCK])
            position += BLOCK
        time.sleep(0.002)


def _talk(engines: Engines, languages: Sequence[str]) -> tuple[VoicePipeline, list[PipelineEvent]]:
    pipeline = VoicePipeline(engines, "You are a test.")
    events: list[PipelineEvent] = []
    pipeline.add_observer(events.append)
    pipeline.use_persona(UsePersona(tuple(languages)))
    pipeline.start()
    mic = np.concatenate([silence(0.3), voiced(1.0), silence(1.5)])
    _run_until(lambda: any(isinstance(e, PlaybackEnded) for e in events), pipeline, mic)
    return pipeline, events


def test_auto_mode_answers_in_the_language_heard() -> None:
    asr = HearsLanguages([("日本語で話してもいいですか？", "ja")])
    llm = FakeLanguageModel("はい、もちろんです。日本語で話しましょう！")
    tts = SpeaksLanguages()
    pipeline, events = _talk(Engines(FakeVoiceActivity(), asr, llm, tts), ["en-US", "ja", "zh"])
    try:
        assert asr.allowed == [("en", "ja", "zh")]  # pinned or detected among these only
        assert tts.prepared == [("en", "ja", "zh")]  # voices loaded before they are needed
        [transcript] = [e for e in events if isinstance(e, Transcript)]
        assert transcript.language == "ja"
        user_message = llm.prompts[-1][-1].content
        assert "日本語で答えてください" in user_message  # the per-turn language note
        assert user_message.endswith("日本語で話してもいいですか？")
        assert tts.spoken and all(language == "ja" for language, _ in tts.spoken)
        notices = [e.message for e in events if isinstance(e, EngineNotice)]
        assert notices == ["Japanese voice unavailable; eSpeak speaks Japanese instead"]
        # the note is not kept in the history: the cached prefix stays the same
        pipeline.stop()
        history = pipeline.machine.conversation.messages_for("")
        assert all("日本語で答えて" not in message.content for message in history)
    finally:
        pipeline.stop()


def test_a_language_the_persona_does_not_speak_gets_its_main_language() -> None:
    asr = HearsLanguages([("Bonjour, comment ça va?", "fr")])
    llm = FakeLanguageModel("今日はいい天気ですね。")
    tts = SpeaksLanguages()
    pipeline, _ = _talk(Engines(FakeVoiceActivity(), asr, llm, tts), ["ja"])
    try:
        user_message = llm.prompts[-1][-1].content
        assert user_message == "Bonjour, comment ça va?"  # one language: no per-turn note
        assert [language for language, _ in tts.spoken] == ["ja"]
    finally:
        pipeline.stop()


def test_cjk_text_in_an_english_reply_is_never_read_by_the_english_voice() -> None:
    asr = HearsLanguages([("How do you say thank you in Japanese?", "en")])
    llm = FakeLanguageModel("You say it like this. ありがとう。 And in Chinese, 谢谢。")
    tts = SpeaksLanguages()
    pipeline, _ = _talk(Engines(FakeVoiceActivity(), asr, llm, tts), ["en"])
    try:
        by_text = {text: language for language, text in tts.spoken}
        assert by_text["You say it like this."] == "en"
        assert by_text["ありがとう。"] == "ja"
        assert any(language == "zh" for text, language in by_text.items() if "谢谢" in text)
        assert by_text["And in Chinese,"] == "en"  # the English around it, in English
    finally:
        pipeline.stop()


def test_the_timeline_records_the_language_heard_and_answered() -> None:
    asr = HearsLanguages([("你好，你叫什么名字？", "zh")])
    llm = FakeLanguageModel("我叫小美，很高兴认识你！")
    pipeline, _ = _talk(Engines(FakeVoiceActivity(), asr, llm, SpeaksLanguages()), ["zh", "en"])
    try:
        [timeline] = pipeline.recorder.confirmed_turns()
        assert (timeline.language, timeline.reply_language) == ("zh", "zh")
        assert timeline.as_dict()["language"] == "zh"
    finally:
        pipeline.stop()


def _spoken_under_a_cap(heard: tuple[str, str], reply: str, cap: int) -> list[str]:
    """What the voice says of ``reply`` to one request, with a cap of ``cap`` sentences."""
    asr, llm, tts = HearsLanguages([heard]), StreamsCharacters(reply), SpeaksLanguages()
    pipeline = VoicePipeline(Engines(FakeVoiceActivity(), asr, llm, tts), "You are a test.")
    events: list[PipelineEvent] = []
    pipeline.add_observer(events.append)
    pipeline.use_persona(UsePersona((heard[1],), max_sentences=cap))
    pipeline.start()
    try:
        mic = np.concatenate([silence(0.3), voiced(1.0), silence(1.5)])
        _run_until(lambda: any(isinstance(e, PlaybackEnded) for e in events), pipeline, mic)
        return [text for _, text in tts.spoken]
    finally:
        pipeline.stop()


def test_the_reply_cap_counts_sentences_not_clauses() -> None:
    """Japanese replies are cut at clauses more often: a cap of two sentences still
    speaks two whole sentences after an opening clause."""
    spoken = "".join(_spoken_under_a_cap(
        ("天気はどう？", "ja"),
        "そうですね、今日はとても良い天気です。明日は雨が降るそうです。明後日は雪です。", 2))
    assert "明日は雨が降るそうです。" in spoken
    assert "明後日" not in spoken


def test_a_first_chunk_cut_inside_its_sentence_is_no_sentence_of_the_cap() -> None:
    """The first words of a reply are spoken before their sentence ends ("I'm so glad |
    you're here."); a cap of two sentences still speaks two whole sentences."""
    spoken = _spoken_under_a_cap(
        ("How are you?", "en"),
        "I'm so glad you're here today. The weather is lovely. Tomorrow it will rain.", 2)
    assert spoken[:3] == ["I'm so glad", "you're here today.", "The weather is lovely."]
    assert "Tomorrow" not in " ".join(spoken)
