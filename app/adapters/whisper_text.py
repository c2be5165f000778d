"""What Whisper's output looks like, judged without the model: a phrase it repeats, a
loop to cut, likely silence, a doubtful result, and the better of a doubtful decode and
its redo (``whisper_asr`` decodes; this decides what to keep)."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

# faster-whisper's own per-window checks (its transcribe() defaults), applied to the short window.
NO_SPEECH_THRESHOLD = 0.6
LOG_PROB_THRESHOLD = -1.0
COMPRESSION_RATIO_THRESHOLD = 2.4


def compression_ratio(text: str) -> float:
    """How well ``text`` zlib-compresses; above 2.4 Whisper is repeating itself."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def repeats_itself(text: str, min_words: int = 3) -> bool:
    """True when a run of ``min_words`` or more words comes twice in a row ("the dog.
    the dog."): the short window's typical failure, which compression alone misses on
    a short text. People rarely say three words twice running."""
    words = "".join(ch if ch.isalnum() or ch.isspace() else " " for ch in text.lower()).split()
    for size in range(min_words, len(words) // 2 + 1):
        for start in range(len(words) - 2 * size + 1):
            if words[start : start + size] == words[start + size : start + 2 * size]:
                return True
    return False


_WORD = re.compile(r"[\w']+")


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
MIN_CJK_PHRASE = 4
"""Characters a looping CJK phrase must have (どうもどうも, 谢谢谢谢 are real speech)."""


def collapse_cjk_loop(text: str) -> str:
    """Japanese or Chinese ``text`` cut to its first pass when it starts over: written
    without spaces, "母は料理が上手です母は料理が上手です母は" is one "word" to
    ``collapse_loop``. A phrase of ``MIN_CJK_PHRASE`` or more characters counts as looping
    when at least ``MIN_CJK_PHRASE`` characters (or half of it) follow it again verbatim.
    A broken last character (a multi-byte token cut by the token cap) is dropped."""
    text = text.rstrip("\ufffd ")
    if not _CJK.search(text):
        return text
    n = len(text)
    for size in range(MIN_CJK_PHRASE, n - MIN_CJK_PHRASE + 1):
        if n - size < max(MIN_CJK_PHRASE, size // 2):
            break
        if all(text[i] == text[i - size] for i in range(size, n)):
            return text[:size].rstrip(" ,、，")
    return text


def collapse_loop(text: str) -> str:
    """``text`` cut to its first period when it is one phrase over and over ("Stop. Stop.
    Stop." -> "Stop."): with no 30 s of padding to tell it the audio ended, Whisper
    sometimes starts the utterance again. A phrase under three words must come three
    times ("bye bye" stays); text that does not loop from its start is returned as is."""
    spans = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
    words = [w for _, w in spans]
    n = len(words)
    for size in range(1, n // 2 + 1):
        if n < (3 if size < 3 else 2) * size:
            continue
        if all(words[i] == words[i - size] for i in range(size, n)):
            return text[: spans[size][0]].rstrip(" ,;")
    return text


def verdict(no_speech_prob: float, avg_logprob: float, text: str) -> str:
    """'silence', 'doubtful' (redo the 30 s way) or 'ok': faster-whisper's thresholds,
    plus a check for a phrase said twice."""
    if no_speech_prob > NO_SPEECH_THRESHOLD and avg_logprob < LOG_PROB_THRESHOLD:
        return "silence"
    if (
        avg_logprob < LOG_PROB_THRESHOLD
        or compression_ratio(text) > COMPRESSION_RATIO_THRESHOLD
        or repeats_itself(text)
    ):
        return "doubtful"
    return "ok"


def loops(text: str) -> bool:
    """Whisper repeating itself: too compressible, or a phrase said twice running."""
    return compression_ratio(text) > COMPRESSION_RATIO_THRESHOLD or repeats_itself(text)


@dataclass(frozen=True)
class ShortDecode:
    """One decode of the short window, judged (``verdict``)."""

    text: str
    verdict: str
    avg_logprob: float


_RANK = {"ok": 2, "silence": 1, "doubtful": 0}


def better_decode(first: ShortDecode, second: ShortDecode) -> ShortDecode:
    """The decode to keep of a doubtful one and its redo: a confident one first, then one
    that heard no speech (a doubtful decode redone as silence was noise), then one that does
    not repeat itself, then the likelier words."""

    def key(decode: ShortDecode) -> tuple[int, bool, float]:
        return _RANK[decode.verdict], not loops(decode.text), decode.avg_logprob

    return max((first, second), key=key)
