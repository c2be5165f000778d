"""What the companion says unasked: in order, into silence only, shown while muted, and
said again when it was talked over before a word was heard."""

from __future__ import annotations

from app.core.announce import Announcer, FirstWords
from app.core.events import PipelineEvent, PlaybackEnded
from app.core.playback import PlaybackQueue
from app.core.worker import LiveTurn


class _Clock:
    def now(self) -> float:
        return 0.0


def _first_words() -> tuple[FirstWords, list[object]]:
    sent: list[object] = []
    events: list[PipelineEvent] = []
    announcer = Announcer(LiveTurn(), PlaybackQueue(16_000, events.append), sent.append,
                          _Clock())
    return FirstWords(announcer), sent


def _spoken(sent: list[object]) -> list[str]:
    return [getattr(job, "text", "") for job in sent if getattr(job, "text", "")]


def test_it_waits_for_a_quiet_moment_and_speaks_in_order() -> None:
    words, sent = _first_words()
    words.add("Your tea is ready.")
    words.add("It's six: time to call mum.")
    assert words.wait_s() is not None  # the controller looks again soon
    assert words.speak(quiet=False, muted=False) is None and sent == []
    assert words.speak(quiet=True, muted=False) is None
    assert _spoken(sent) == ["Your tea is ready."]
    turn_id = words.announcer.current
    assert turn_id is not None
    assert words.speak(quiet=True, muted=False) is None  # one at a time
    heard = words.ended(PlaybackEnded(turn_id, "Your tea is ready.", False, 1.0))
    assert heard == "Your tea is ready."
    words.announcer.current = None
    words.speak(quiet=True, muted=False)
    assert " ".join(_spoken(sent)[1:]) == "It's six: time to call mum."


def test_muted_it_is_shown_not_said() -> None:
    words, sent = _first_words()
    words.add("Your timer is done.")
    assert words.speak(quiet=True, muted=True) == "Your timer is done."
    assert sent == [] and words.wait_s() is None


def test_talked_over_before_a_word_it_is_said_again_later() -> None:
    words, _sent = _first_words()
    words.add("Your timer is done.")
    words.speak(quiet=True, muted=False)
    turn_id = words.announcer.current
    assert turn_id is not None
    words.announcer.stop()
    assert words.ended(PlaybackEnded(turn_id, "", True, 0.1)) is None
    assert list(words.waiting) == ["Your timer is done."]
    assert words.ended(PlaybackEnded(99, "A reply.", False, 2.0)) is None  # not one of ours
