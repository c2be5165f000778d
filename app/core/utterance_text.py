"""Does a transcript read like a finished request? The words half of the end-of-turn call.

The audio model (Smart Turn) hears intonation but misjudges flat or synthetic voices; the
transcript we already have at the first pause (the speculative turn's ASR) tells another
part of the story: "Why is the sky blue?" is done, "I would like to go to the" is not.
Pure and cheap: called once per pause.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from enum import Enum


class TextVerdict(Enum):
    QUESTION = "question"
    """Ends with a question mark: a request, whatever the voice sounded like."""
    COMPLETE = "complete"
    """Ends like a sentence, on a word that can end one."""
    REQUEST = "request"
    """Ends like a sentence and opens like a request ("Tell me something about the ocean.",
    "Could you recommend a film."): asked as a question is, though written as a statement."""
    UNFINISHED = "unfinished"
    """Trails off: a conjunction, an article, a preposition, a comma, an ellipsis."""
    UNCLEAR = "unclear"
    """No punctuation to go by, or nothing said: the audio model decides."""


_ARTICLES_AND_POSSESSIVES = frozenset(
    {"the", "a", "an", "my", "your", "its", "our", "their", "every"})
_FILLERS = frozenset({"um", "uh", "er", "erm"})
_JOINING_CONJUNCTIONS = frozenset(
    {"and", "or", "but", "because", "although", "whereas", "unless", "than"})
TRAILING_WORDS = _ARTICLES_AND_POSSESSIVES | _FILLERS | _JOINING_CONJUNCTIONS | frozenset({
    # conjunctions that may also end a question ("Why not, though?", "What if?")
    "so", "though", "until", "if", "whether", "which", "whose",
    # prepositions that are not also verb particles
    "to", "of", "for", "with", "without", "from", "into", "onto", "at", "by", "about", "as",
    "via", "like", "between", "among", "toward", "towards", "despite", "unlike",
})
"""Words a spoken request does not end on (English): conjunctions, articles, possessives,
prepositions that are not also verb particles ("log in", "turn it on" end fine), fillers.
Pronouns and verbs are left out: "Can you help me?", "I know what it is." are finished."""

SO_ENDS_A_SENTENCE_AFTER = frozenset(
    {"think", "hope", "guess", "believe", "suppose", "said", "say", "do", "not"}
)
"""'so' trails ("...and so") except in "I think so", "I hope so", ..."""

NEVER_END_A_QUESTION = (
    _ARTICLES_AND_POSSESSIVES | _FILLERS | _JOINING_CONJUNCTIONS | frozenset({"between"}))
"""Words no question ends on, although Whisper may put a question mark after them
("What is the difference between?"). Prepositions are left out: English questions end on
them ("Where are you from?", "What time zone is Tokyo in?")."""

ENDING_MARKS = (".", "!", "\u3002", "\uff01")  # and the CJK full stop / exclamation
QUESTION_MARKS = ("?", "\uff1f")
TRAILING_MARKS = (",", ";", ":", "-", "\u2013", "\u2014", "\u3001", "\uff0c", "\u2026", "...")
"""Commas, dashes and ellipses, CJK ones included."""


CJK_QUESTION_ENDINGS = ("か", "かい", "かな", "吗", "嗎", "呢", "么", "麼", "嘛", "哪里",
                        "哪儿", "怎么样", "谁", "多少")
"""How a Japanese or Mandarin question ends when Whisper wrote no question mark
("東京タワーに行ったことがありますか", "你最喜欢的季节是什么"): the question particles
(か, 吗, 呢) and the question words that close a Mandarin question (什么, 哪里, 谁)."""
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]$")


REQUEST_OPENERS = frozenset({
    "tell", "give", "show", "help", "recommend", "explain", "describe", "suggest", "list",
    "summarise", "summarize", "teach", "remind", "translate", "define", "compare", "please",
    "can", "could", "would", "will",
})
"""First words of a spoken request that Whisper closes with a full stop: imperatives that
ask for an answer, and the modals of a question written without its mark ("Could you...").
A statement ("I went to the store.") may well go on; a request has asked what it asks.
"Let me think." and "Let's see." are left out: they go on."""


def _words(text: str) -> list[str]:
    return ["".join(ch for ch in word.lower() if ch.isalnum() or ch == "'")
            for word in text.split()]


THAT_INTRODUCES_A_CLAUSE_AFTER = frozenset(
    {"is", "was", "think", "thinking", "thought", "said", "say", "know", "knew", "believe",
     "mean", "means", "so", "guess", "hope", "feel", "felt", "sure", "fact", "idea"}
)
"""'that' trails after these ("what I was thinking is that", "I know that") but not as an
object ("I like that")."""


def _trails_off(text: str) -> bool:
    words = [w for w in _words(text) if w]
    if not words:
        return False
    last, before = words[-1], words[-2] if len(words) > 1 else ""
    if last == "that":
        return before in THAT_INTRODUCES_A_CLAUSE_AFTER
    if last not in TRAILING_WORDS:
        return False
    return not (last == "so" and before in SO_ENDS_A_SENTENCE_AFTER)


def judge_text(text: str) -> TextVerdict:
    """How the transcript so far ends. A question mark settles it; Whisper closes most
    fragments with a full stop, so a full stop after a trailing word does not."""
    stripped = text.strip().strip("\"')]\u201d\u2019")
    if not stripped:
        return TextVerdict.UNCLEAR
    if stripped.endswith(TRAILING_MARKS):
        return TextVerdict.UNFINISHED
    if stripped.endswith(QUESTION_MARKS):
        last = [word for word in _words(stripped) if word][-1:]
        if last and last[0] in NEVER_END_A_QUESTION:
            return TextVerdict.UNFINISHED
        return TextVerdict.QUESTION
    if _trails_off(stripped):
        return TextVerdict.UNFINISHED
    if stripped.endswith(ENDING_MARKS):
        first = [word for word in _words(stripped) if word][:1]
        return TextVerdict.REQUEST if first and first[0] in REQUEST_OPENERS else (
            TextVerdict.COMPLETE)
    if _CJK.search(stripped) and stripped.endswith(CJK_QUESTION_ENDINGS):
        return TextVerdict.QUESTION
    return TextVerdict.UNCLEAR


QUESTION_BAR = 0.1
"""A question ends the turn unless the audio model is nearly sure the user goes on."""
SENTENCE_BAR = 0.3
"""A full stop ends the turn if the audio model gives it this much."""


def end_turn_now(verdict: TextVerdict, probability: float | None, threshold: float) -> bool:
    """Combine the words and the audio model's probability (None: no audio model).

    The words move the audio model's bar rather than overrule it: a question ends the turn
    when the model gives it at least ``QUESTION_BAR`` (flat, synthetic voices score
    finished questions at 0.2), a finished sentence at ``SENTENCE_BAR`` (Whisper puts a
    full stop after fragments too), a trailing word never; otherwise the usual threshold."""
    if verdict is TextVerdict.UNFINISHED:
        return False
    if probability is None:
        return verdict is not TextVerdict.UNCLEAR
    bar = {TextVerdict.QUESTION: QUESTION_BAR, TextVerdict.COMPLETE: SENTENCE_BAR,
           TextVerdict.REQUEST: SENTENCE_BAR}
    return probability >= bar.get(verdict, threshold)


class EndOfTurnCall(Enum):
    """What the listener does with the pause once the words are known."""

    END_NOW = "end now"
    USUAL_SILENCE = "usual silence"
    """End after the usual end-of-turn silence: a finished question or request that the audio
    model hears as unfinished (flat and synthetic voices score finished questions near 0). The
    words and the sound disagree, so neither settles it; the silence does, as it would
    with no audio model, instead of the longer wait for a user who trails off."""
    LONGER_SILENCE = "longer silence"
    """The user sounds unfinished: wait longer than usual before ending the turn."""
    LOOK_AGAIN = "look again"
    """A finished sentence the audio model heard as unfinished: wait longer, but let the
    model look again once the silence has gone on (``EndpointConfig.look_again_ms``);
    people's falling voices score finished then, a voice held for more words does not."""


END_OF_TURN_COMPLETE = 0.5
"""The audio model's probability above which an unclear transcript ends the turn."""


def end_of_turn_call(
    verdict: TextVerdict, probability: float | None, threshold: float
) -> EndOfTurnCall:
    """``end_turn_now``, and when it says no, how long to wait for more."""
    if end_turn_now(verdict, probability, threshold):
        return EndOfTurnCall.END_NOW
    if verdict in (TextVerdict.QUESTION, TextVerdict.REQUEST):
        return EndOfTurnCall.USUAL_SILENCE
    if verdict is TextVerdict.COMPLETE:
        return EndOfTurnCall.LOOK_AGAIN
    return EndOfTurnCall.LONGER_SILENCE


WHISPER_HALLUCINATIONS = frozenset({
    "thank you", "thank you very much", "thank you so much", "thanks", "thanks for watching",
    "thank you for watching", "please subscribe", "bye", "bye bye", "goodbye", "you",
    "so", "the", "i", "a",
})
"""What Whisper writes for echo residue, breath or room noise (it learnt it from subtitles)."""

BACKCHANNELS = frozenset({
    "mm", "mmm", "mhm", "mmhmm", "mmhm", "mhmm", "mm hmm", "hmm", "uh huh", "uhhuh", "uhuh", "uh",
    "um", "oh", "ah", "yeah", "yes", "yep", "okay", "ok", "right", "sure", "i see", "wow",
    "cool", "nice", "ha", "haha", "hahaha", "heh", "hehe",
})
"""Listener noises that show attention, not a wish to interrupt. Said in a run ("yeah,
yeah", "oh, okay", "ha ha ha") they still are (``is_backchannel``)."""

_BACKCHANNEL_RUN_MAX_WORDS = 5
_SOUND_TAG = re.compile(r"[(\[*][^)\]*]{1,40}[)\]*]|[\u266a\u266b]")
"""What Whisper writes for a sound that is not words: "(laughs)", "[Laughter]",
"*coughs*", a music note (learnt from subtitles)."""


_HUM = re.compile(r"h*m[hm]*")
"""A closed-mouth hum however Whisper spells it: "Mhm", "Hmm", "Mmm", "M-H-M"."""


def without_sound_tags(text: str) -> str:
    """The words of ``text``, with Whisper's notes of laughs, coughs and music taken out:
    a laugh is no request, and "(laughs)" alone is nothing said."""
    return " ".join(_SOUND_TAG.sub(" ", text).split())


def is_backchannel(text: str) -> bool:
    """Whether ``text`` is only a listener's noises: one of ``BACKCHANNELS``, or a short run
    of them ("Yeah, yeah.", "Oh, okay, I see.", "Ha ha ha!")."""
    words = [w for w in _words(without_sound_tags(text)) if w]
    if not words or len(words) > _BACKCHANNEL_RUN_MAX_WORDS:
        return False
    index = 0
    while index < len(words):
        if _HUM.fullmatch(words[index]):  # "mhm", "hmm", "mmm", Whisper's "M-H-"
            index += 1
            continue
        pair = " ".join(words[index:index + 2])
        if pair in BACKCHANNELS and index + 1 < len(words):
            index += 2
        elif words[index] in BACKCHANNELS:
            index += 1
        else:
            return False
    return True


ECHO_SHARE = 0.6
"""Speech whose words mostly repeat runs of the assistant's recent words is its echo."""
ECHO_RUN_WORDS = 3
"""Words an echo repeats in the assistant's order, at least (fewer if the speech is shorter).
A bag of words is not enough: after a story, "what", "time", "is" and "it" are all among
the assistant's words, yet "What time is it?" is a question, not the story coming back."""


def not_a_request(text: str, assistant_words: list[str], reply_still_going: bool) -> bool:
    """Speech heard while the assistant was audible that should neither interrupt it nor
    start a turn: empty, a Whisper hallucination, the assistant's own words coming back, or
    (while the reply is still going) a backchannel like "mm-hm" or "yeah"."""
    words = [w for w in _words(without_sound_tags(text)) if w]
    if not words:
        return True
    said = " ".join(words)
    if said in WHISPER_HALLUCINATIONS:
        return True
    if reply_still_going and is_backchannel(said):
        return True
    if len(words) >= 2:
        own = [w for w in _words(" ".join(assistant_words)) if w]
        return echoed_share(words, own) >= ECHO_SHARE
    return False


def echoed_share(words: list[str], assistant_words: list[str]) -> float:
    """The share of ``words`` that repeat the assistant's words in order, in runs of at
    least ``ECHO_RUN_WORDS`` (the whole of shorter speech). Echo comes back as the
    assistant said it, give or take a word Whisper mishears, which breaks a run but
    leaves the runs around it."""
    if not words or not assistant_words:
        return 0.0
    shortest = min(ECHO_RUN_WORDS, len(words))
    matcher = SequenceMatcher(None, assistant_words, words, autojunk=False)
    repeated = sum(block.size for block in matcher.get_matching_blocks() if block.size >= shortest)
    return repeated / len(words)


def words_after(text: str, prefix: str) -> str:
    """``text`` without its opening words when they repeat ``prefix`` (give or take a word
    Whisper heard differently the second time): what a voice said after a part of it
    that was already judged. The words come back lower-cased, without punctuation."""
    words, before = [w for w in _words(text) if w], [w for w in _words(prefix) if w]
    if not before:
        return " ".join(words)
    matcher = SequenceMatcher(None, before, words, autojunk=False)
    cut, least = 0, min(2, len(before))  # a lone common word ("time") is no repeat
    for block in matcher.get_matching_blocks():
        if not block.size or block.b > cut + 1 or block.size < least:
            break  # runs from the start, a misheard word between them at most
        cut = block.b + block.size
    return " ".join(words[cut:])
