"""The words half of the end-of-turn call."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.utterance_text import (
    EndOfTurnCall,
    TextVerdict,
    end_of_turn_call,
    end_turn_now,
    is_backchannel,
    judge_text,
    not_a_request,
    without_sound_tags,
    words_after,
)

V = TextVerdict


@pytest.mark.parametrize("text", [
    "Why is the sky blue?", "What time zone is Tokyo in?", "Can you help me?",
    "Do you know what time it is?", "Tell me a joke.", "I think so.", "Turn it on.",
    "I like that.",
    "I know what it is.", "Thanks!", "What is this about?", "Where are you from?",
    "Who are you talking to?",
    "\u6771\u4eac\u306f\u3069\u3053\u3067\u3059\u304b\uff1f",
])
def test_finished_requests(text: str) -> None:
    assert judge_text(text) in (V.COMPLETE, V.QUESTION, V.REQUEST)


@pytest.mark.parametrize(("text", "verdict"), [
    ("Tell me something interesting about the ocean.", V.REQUEST),
    ("Give me one tip to be more productive.", V.REQUEST),
    ("Could you recommend a good movie for tonight.", V.REQUEST),
    ("Please explain how rainbows form!", V.REQUEST),
    ("I went to the store.", V.COMPLETE),
    ("Let me think.", V.COMPLETE),
    ("Tell me about the.", V.UNFINISHED),
    ("Tell me a story about", V.UNFINISHED),
])
def test_a_full_stop_after_a_request_reads_as_asked(text: str, verdict: TextVerdict) -> None:
    assert judge_text(text) is verdict


@pytest.mark.parametrize("text", [".", "!", "\u3002", "?!.", " . "])
def test_marks_without_words_are_judged_not_crashed_on(text: str) -> None:
    assert judge_text(text) in tuple(TextVerdict)  # Whisper writes these for a breath


@given(st.text(max_size=40))
def test_any_transcript_gets_a_verdict(text: str) -> None:
    assert judge_text(text) in tuple(TextVerdict)


@pytest.mark.parametrize("text", [
    "I would like to go to the", "I would like to go to the.", "So what I was thinking is,",
    "Can you tell me about the...", "Yesterday I went to the store because",
    "Tell me about my", "I need milk and.", "and so", "I was going to…", "Um.",
    "So what I was thinking is that.", "What is the difference between.",
    "What is the difference between?", "Can you tell me about the?", "Do you want tea or?",
])
def test_requests_that_trail_off(text: str) -> None:
    assert judge_text(text) is V.UNFINISHED


@pytest.mark.parametrize("text", ["", "   ", "tell me a story", "hello there",
                                  "今日は暑いですね", "我很好", "Is it ok"])
def test_unclear_without_punctuation(text: str) -> None:
    assert judge_text(text) is V.UNCLEAR


@pytest.mark.parametrize("text", [
    "東京タワーに行ったことがありますか", "好きな食べ物は何ですか", "明日は晴れるかな",
    "你最喜欢的季节是什么", "你好吗", "你呢", "成都有什么好玩的吗", "他是谁",
])
def test_a_japanese_or_mandarin_question_without_a_question_mark_is_a_question(
        text: str) -> None:
    """Whisper often writes these without ？; the particle or question word says it."""
    assert judge_text(text) is V.QUESTION


def test_words_and_audio_model_combined() -> None:
    assert end_turn_now(V.QUESTION, 0.18, 0.5)  # a flat voice: the question settles it
    assert not end_turn_now(V.QUESTION, 0.04, 0.5)  # ...unless the model is sure it goes on
    assert end_turn_now(V.COMPLETE, 0.35, 0.5)  # a full stop lowers the bar
    assert not end_turn_now(V.COMPLETE, 0.2, 0.5)
    assert not end_turn_now(V.UNFINISHED, 0.95, 0.5)  # sounds done, reads cut off: wait
    assert end_turn_now(V.UNCLEAR, 0.7, 0.5)
    assert not end_turn_now(V.UNCLEAR, 0.3, 0.5)
    assert not end_turn_now(V.UNCLEAR, None, 0.5)  # no audio model: the silence decides
    assert end_turn_now(V.QUESTION, None, 0.5) and end_turn_now(V.COMPLETE, None, 0.5)


def test_when_not_now_only_a_finished_question_waits_the_usual_silence() -> None:
    call = end_of_turn_call
    assert call(V.QUESTION, 0.18, 0.5) is EndOfTurnCall.END_NOW
    # the audio model is sure a finished question goes on (flat voices score them ~0.02):
    # the usual silence decides, not the longer wait for the unfinished
    assert call(V.QUESTION, 0.02, 0.5) is EndOfTurnCall.USUAL_SILENCE
    # a full stop is weaker evidence (Whisper puts one after fragments too): the longer
    # wait, unless the audio model, looking again after more silence, hears it finished...
    assert call(V.COMPLETE, 0.2, 0.5) is EndOfTurnCall.LOOK_AGAIN
    assert call(V.REQUEST, 0.35, 0.5) is EndOfTurnCall.END_NOW
    # ...but a request ("Tell me something about the ocean.") has asked what it asks: Smart
    # Turn gave the bench's Piper voice 0.21 on it, and it waited 0.93 s for more
    assert call(V.REQUEST, 0.2, 0.5) is EndOfTurnCall.USUAL_SILENCE
    assert call(V.UNFINISHED, 0.95, 0.5) is EndOfTurnCall.LONGER_SILENCE
    assert call(V.UNCLEAR, 0.3, 0.5) is EndOfTurnCall.LONGER_SILENCE
    assert call(V.UNCLEAR, None, 0.5) is EndOfTurnCall.LONGER_SILENCE


@pytest.mark.parametrize("text", ["Thank you.", "Thanks for watching!", "", "...", "Bye."])
def test_hallucinations_over_the_assistant_are_not_requests(text: str) -> None:
    assert not_a_request(text, [], reply_still_going=False)


def test_backchannels_only_while_the_reply_goes_on() -> None:
    for text in ("Mm-hmm.", "Yeah.", "Okay.", "Uh-huh"):
        assert not_a_request(text, [], reply_still_going=True)
        assert not not_a_request(text, [], reply_still_going=False)


def test_the_assistants_own_words_coming_back_are_echo() -> None:
    sentence = "Once upon a time there was a little dragon who loved bread"
    said = sentence.split(" ")
    assert not_a_request("a little dragon who loved", said, reply_still_going=True)
    assert not not_a_request("Stop, tell me a joke instead.", said, reply_still_going=True)
    assert not not_a_request("What time is it?", said, reply_still_going=False)


def test_a_question_made_of_common_words_after_a_story_is_not_echo() -> None:
    # every word of the question was somewhere in the story, none in its order: a bag of
    # words called it echo and the question was lost
    told = ("Once upon a time, a sailor asked what the sea is hiding. It is deep, and time "
            "there runs slowly. What a sight it is!")
    story = told.split()
    assert not not_a_request("What time is it?", story, reply_still_going=True)
    assert not not_a_request("Is it time?", story, reply_still_going=False)


def test_echo_with_a_misheard_word_is_still_echo() -> None:
    told = "Once upon a time there was a little dragon who loved bread and honey"
    said = told.split()
    # Whisper heard "loves" for "loved": two runs of the assistant's words remain
    assert not_a_request("the little dragon who loves bread and honey", said, True)
    assert not_a_request("little dragon", said, reply_still_going=True)  # a short exact run
    assert not not_a_request("dragon little", said, reply_still_going=False)  # not in order


@pytest.mark.parametrize(("text", "prefix", "rest"), [
    ("Once upon a time there was. What time is it?", "Once upon a time there was",
     "what time is it"),
    ("Once upon a time, there were... What time is it?", "Once upon a time there was",
     "were what time is it"),  # a word heard differently the second time stays
    ("Mm-hmm. Stop!", "Mm-hmm.", "stop"),
    ("Stop. What time is it?", "", "stop what time is it"),
    ("What time is it?", "Once upon a time", "what time is it"),  # no repeat: all of it
    ("Once upon a time", "Once upon a time", ""),
])
def test_words_after_a_part_already_judged(text: str, prefix: str, rest: str) -> None:
    assert words_after(text, prefix) == rest



@pytest.mark.parametrize("text", ["Yeah, yeah.", "Oh, okay, I see.", "Ha ha ha!",
                                  "Mm-hmm, right.", "Uh-huh.", "(laughs) Yeah.",
                                  "M-H-", "Hmmm.", "Mmm, yeah."])
def test_runs_of_backchannels_are_backchannels(text: str) -> None:
    assert is_backchannel(text)
    assert not_a_request(text, [], reply_still_going=True)


@pytest.mark.parametrize("text", ["Yeah, but why?", "Okay, stop.", "No.", "Wait.",
                                  "Yes yes yes yes yes yes.", "I", "", "My", "Mom.",
                                  "Hmm, what time is it?"])
def test_words_beyond_a_listeners_noises_are_not_backchannels(text: str) -> None:
    assert not is_backchannel(text)


@pytest.mark.parametrize("text", ["(laughs)", "[Laughter]", "*coughs*", "\u266a"])
def test_whispers_notes_of_sounds_are_no_words(text: str) -> None:
    assert without_sound_tags(text) == ""
    assert not_a_request(text, [], reply_still_going=False)
    assert without_sound_tags("(sighs) What time is it?") == "What time is it?"
