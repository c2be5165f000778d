"""Emotion tags never reach the speaker, the transcript or the history, with a scripted
model that tags every sentence (some badly) and with the embedded SmolLM2-135M, whatever
it writes. Each spoken chunk is cued to the face, on the pipeline clock, as it starts to
play (``ExpressionCue`` through the telemetry hub)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence

import pytest

from app.adapters.fakes import (
    FakeLanguageModel,
    FakeRecognizer,
    FakeSynthesizer,
    FakeVoiceActivity,
)
from app.core.emotion import EMOTION_WORDS, Emotion
from app.core.events import (
    PipelineEvent,
    PlaybackEnded,
    PlaybackStarted,
    ReplyChunk,
    TurnCommitted,
)
from app.core.pipeline import Engines, VoicePipeline
from app.core.ports import ChatMessage, LanguageModel, PromptStats
from app.core.telemetry import ExpressionCue, TokenDelta
from app.personas import Persona

BLOCK = 512
_WORDS = "|".join(re.escape(word) for word in EMOTION_WORDS)
TAG_LIKE = re.compile(
    rf"[\[(<【（［]\s*(?:{_WORDS})\b|^\s*[\[(<【]\s*[a-z]+\s*[\])>】]",  # noqa: RUF001
    re.IGNORECASE,
)
"""A known emotion word just inside a bracket, or any bracketed word opening the text."""

SCRIPTED = [
    "[happy] Oh, hello there! [thinking] Let me think about that for a moment.",
    "(SAD) I am sorry to hear it. [whispers] It will be fine, my friend. <surprised> Really?",
    "[happy Hello again! [emotion: smug] I knew you would come back. Nothing more to say.",
]
E = Emotion
SCRIPTED_EMOTIONS = [
    [E.HAPPY, E.THINKING],
    [E.SAD, E.SAD, None, E.SURPRISED],  # "I am sorry | to hear it.": the first words cut
    [E.HAPPY, E.SMUG, E.SMUG],
]


def _wait(condition: Callable[[], bool], pipeline: VoicePipeline, timeout: float) -> None:
    """Play the speaker block by block (faster than real time) until ``condition()``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        pipeline.pull_audio(BLOCK)
        time.sleep(0.002)


def _converse(engines: Engines, persona: Persona, requests: Sequence[str],
              history: Sequence[tuple[str, str]] = (),
              timeout: float = 30.0) -> tuple[VoicePipeline, list[PipelineEvent]]:
    pipeline = VoicePipeline(engines, persona.full_system_prompt())
    events: list[PipelineEvent] = []
    pipeline.add_observer(events.append)
    pipeline.start()
    try:
        if history:
            pipeline.load_conversation(persona.full_system_prompt(), history)
        def committed() -> int:
            return sum(isinstance(e, TurnCommitted) for e in events)

        for request in requests:
            before = committed()
            pipeline.type_request(request)
            _wait(lambda: committed() > before, pipeline, timeout)  # noqa: B023
        _wait(pipeline.is_idle, pipeline, timeout)
    finally:
        pipeline.stop()
    return pipeline, events


def _assert_no_tags(texts: Sequence[str], what: str) -> None:
    for text in texts:
        assert not TAG_LIKE.search(text), f"a tag reached {what}: {text!r}"


def _assert_tags_never_heard(pipeline: VoicePipeline, events: list[PipelineEvent],
                             tts: FakeSynthesizer, prompts: list[list[ChatMessage]],
                             given: Sequence[tuple[str, str]] = ()) -> None:
    """``given``: the history the test started from (left out: it is the test's own)."""
    assert tts.texts, "nothing was spoken"
    _assert_no_tags(tts.texts, "the speaker")
    _assert_no_tags([e.text for e in events if isinstance(e, ReplyChunk)], "the transcript")
    _assert_no_tags([e.heard_text for e in events if isinstance(e, PlaybackEnded)],
                    "what was heard")
    _assert_no_tags([e.heard_text for e in events if isinstance(e, TurnCommitted)],
                    "the saved history")
    exchanges = pipeline.machine.conversation.exchanges
    assert exchanges[: len(given)] == list(given)
    _assert_no_tags([a for _, a in exchanges[len(given):]], "the history")
    ours = {text for pair in given for text in pair}
    for prompt in prompts[1:]:  # the next turns' prompts: what the KV prefix is made of
        _assert_no_tags([m.content for m in prompt if m.role != "system"
                         and m.content not in ours], "a later prompt")


def _assert_cued_as_played(events: list[PipelineEvent]) -> list[list[Emotion | None]]:
    """One cue per spoken chunk, in order, each as or after its turn started to sound;
    returns each turn's cued emotions."""
    turns: dict[int, list[Emotion | None]] = {}
    for chunk in (e for e in events if isinstance(e, ReplyChunk)):
        cues = [e for e in events if isinstance(e, ExpressionCue)
                and e.turn_id == chunk.turn_id and e.index == chunk.index]
        assert len(cues) == 1, chunk
        assert cues[0].emotion == chunk.emotion
        started = next(e for e in events
                       if isinstance(e, PlaybackStarted) and e.turn_id == chunk.turn_id)
        assert cues[0].at >= started.at
        turns.setdefault(chunk.turn_id, []).append(chunk.emotion)
    cue_times = [e.at for e in events if isinstance(e, ExpressionCue)]
    assert cue_times == sorted(cue_times)
    return [turns[t] for t in sorted(turns)]


def test_a_scripted_model_s_tags_are_shown_never_heard(persona: Persona) -> None:
    llm, tts = FakeLanguageModel(SCRIPTED), FakeSynthesizer()
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), llm, tts)
    pipeline, events = _converse(engines, persona, ["Hi!", "My cat is ill.", "I'm back."])
    _assert_tags_never_heard(pipeline, events, tts, llm.prompts)
    assert _assert_cued_as_played(events) == SCRIPTED_EMOTIONS
    # the history holds what was heard, and so do the next prompts (and the KV prefix)
    [(_, first), *_] = pipeline.machine.conversation.exchanges
    assert first == "Oh, hello there! Let me think about that for a moment."
    assert llm.prompts[1][-2] == ChatMessage("assistant", first)
    # the raw reply, tags and all, is only in the token stream (the model's own text)
    assert "[happy]" in "".join(e.text for e in events if isinstance(e, TokenDelta))


class _Recording:
    """A language model that keeps every prompt it is given."""

    def __init__(self, llm: LanguageModel) -> None:
        self.llm = llm
        self.prompts: list[list[ChatMessage]] = []

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        return self.llm.warm(messages)

    def stream(self, messages: Sequence[ChatMessage], cancelled: Callable[[], bool],
               on_prompt: Callable[[PromptStats], None] | None = None) -> Iterator[str]:
        self.prompts.append(list(messages))
        return self.llm.stream(messages, cancelled, on_prompt)


TAGGED_HISTORY = [
    ("Hi Hana!", "[happy] Hi! [thinking] What shall we talk about?"),
    ("My cat is sick.", "[sad] Oh no, I am sorry. [thinking] What did the vet say?"),
]
"""Tags in the history (never there in the app) make the small model write tags too."""


@pytest.mark.slow
@pytest.mark.parametrize("history", [(), TAGGED_HISTORY], ids=["as-asked", "provoked"])
def test_the_embedded_model_s_tags_never_reach_the_speaker_or_history(
        persona: Persona, history: Sequence[tuple[str, str]]) -> None:
    from app.adapters.llama_llm import LlamaLanguageModel
    from app.adapters.sampling import SamplingConfig

    llm = _Recording(LlamaLanguageModel(sampling=SamplingConfig(seed=5, max_tokens=48,
                                                                temperature=0.9)))
    tts = FakeSynthesizer(seconds_per_char=0.02)
    engines = Engines(FakeVoiceActivity(), FakeRecognizer(), llm, tts)  # type: ignore[arg-type]
    requests = ["I won the lottery!", "Guess what happened today.", "You are silly.",
                "Tell me a joke."]
    pipeline, events = _converse(engines, persona, requests, history, timeout=120.0)
    _assert_tags_never_heard(pipeline, events, tts, llm.prompts, history)
    emotions = [e for turn in _assert_cued_as_played(events) for e in turn]
    if history:  # it wrote tags, and the face got them
        assert any(emotion is not None for emotion in emotions), emotions
