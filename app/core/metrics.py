"""Per-turn timeline of stage timestamps (see shared design LATENCY.md).

Built only by observing pipeline events, so what the HUD, ``run --timeline`` and
``bench`` report is what actually happened, with no stage timing itself.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from app.core.events import (
    Acknowledged,
    AnswerStarted,
    BargeIn,
    EndOfTurnDecided,
    PipelineEvent,
    PlaybackEnded,
    PlaybackPaused,
    PlaybackResumed,
    PlaybackStarted,
    ReplyChunk,
    ReplyFinished,
    SpeechAudio,
    Transcript,
    TurnCancelled,
    TurnCommitted,
    TurnConfirmed,
    TurnStarted,
)
from app.core.telemetry import PrefixReuse, TokenDelta
from app.core.turn_commands import NOT_THE_USER, OTHER_VOICE


@dataclass
class TurnTimeline:
    turn_id: int
    speculative: bool = False
    speech_start: float | None = None
    speech_end: float | None = None
    turn_started: float | None = None
    end_of_turn: float | None = None
    asr_final: float | None = None
    transcript: str = ""
    language: str | None = None
    """The language heard ("en", "ja", "zh"; None: unknown), shown in the HUD."""
    reply_language: str | None = None
    """The language the reply was asked for."""
    llm_first_token: float | None = None
    first_chunk_to_tts: float | None = None
    first_chunk_text: str = ""
    tts_first_audio: float | None = None
    first_sample_played: float | None = None
    """The first sound of the turn: the acknowledgement's when there was one."""
    acknowledgement: str = ""
    """The phrase played while the answer was late ("" when none was needed)."""
    acknowledged_at: float | None = None
    """When the acknowledgement was queued (the deadline)."""
    answer_played: float | None = None
    """The answer's own first sample, when an acknowledgement played before it."""
    playback_ended: float | None = None
    barge_in: float | None = None
    prompt_tokens: int | None = None
    reused_tokens: int | None = None
    prefix_reused: bool | None = None
    reply_text: str = ""
    heard_text: str = ""
    interrupted: bool = False
    cancelled: str | None = None
    confirmed: bool = False
    end_of_turn_probability: float | None = None
    """The audio model's end-of-turn score at the pause (None: no audio model)."""
    end_of_turn_text: str = ""
    """How the words at the pause read: complete / unfinished / unclear ("" if not judged)."""
    chunk_audio: list[tuple[float, float]] = field(default_factory=list)
    """(when the synthesizer delivered it, its length in s) for every chunk of the reply."""

    def playback_gaps(self) -> list[float]:
        """Silences the speaker waited between consecutive chunks of the reply: each chunk
        starts when both it has arrived and the one before has finished playing."""
        first = self.first_answer_word
        if first is None or not self.chunk_audio:
            return []
        gaps = []
        playing_until = first + self.chunk_audio[0][1]
        for arrived, seconds in self.chunk_audio[1:]:
            gaps.append(max(0.0, arrived - playing_until))
            playing_until = max(arrived, playing_until) + seconds
        return gaps

    @property
    def first_answer_word(self) -> float | None:
        """When the answer itself began to play (after the acknowledgement, if any)."""
        return self.answer_played if self.acknowledgement else self.first_sample_played

    @property
    def voice_to_voice(self) -> float | None:
        """End of the user's speech to the answer's first sample (the number users feel;
        an acknowledgement before it does not count as the answer)."""
        if self.speech_end is None or self.first_answer_word is None:
            return None
        return self.first_answer_word - self.speech_end

    @property
    def voice_to_first_sound(self) -> float | None:
        """End of the user's speech to the first sample played, acknowledgement or answer."""
        if self.speech_end is None or self.first_sample_played is None:
            return None
        return self.first_sample_played - self.speech_end

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        data["voice_to_voice"] = self.voice_to_voice
        data["voice_to_first_sound"] = self.voice_to_first_sound
        data["first_sound"] = self.first_sample_played  # the acknowledgement's, if one played
        data["first_answer_word"] = self.first_answer_word
        data["playback_gaps"] = self.playback_gaps()
        return data


class TimelineRecorder:
    def __init__(self, keep: int | None = None) -> None:
        self.keep = keep
        """Turns kept (None: all, for ``run --timeline`` and ``bench``; the app keeps the
        last few, enough for the HUD, so an evening of talk does not grow it)."""
        self.turns: dict[int, TurnTimeline] = {}
        self.speculative_cancelled = 0
        self.reply_pauses: list[tuple[float, float]] = []
        """(the voice's onset, the reply pausing) on the listener clock: which voice paused it."""
        self.resumed_after_pause = 0
        """Pauses that ended with the reply playing on (a cough, an echo, a backchannel)."""
        self.not_the_user = 0
        """Speech over the assistant dropped as echo, hallucination or backchannel."""
        self.other_voice = 0
        """Turns dropped because a voice not enrolled spoke without calling the companion."""

    @property
    def barge_in_stops(self) -> list[float]:
        """Seconds from the user's voice onset to the reply pausing (listener clock)."""
        return [at - onset for onset, at in self.reply_pauses]

    def _turn(self, turn_id: int) -> TurnTimeline | None:
        return self.turns.get(turn_id)

    def observe(self, event: PipelineEvent) -> None:
        if isinstance(event, PlaybackPaused):
            self.reply_pauses.append((event.speech_start, event.at))
            return
        if isinstance(event, PlaybackResumed):
            self.resumed_after_pause += 1
            return
        if isinstance(event, TurnCancelled) and event.reason == NOT_THE_USER:
            self.not_the_user += 1
        if isinstance(event, TurnCancelled) and event.reason == OTHER_VOICE:
            self.other_voice += 1
        if isinstance(event, TurnStarted):
            if self.keep is not None:
                for old in [t for t in self.turns if t <= event.turn_id - self.keep]:
                    del self.turns[old]
            self.turns[event.turn_id] = TurnTimeline(
                turn_id=event.turn_id,
                speculative=event.speculative,
                speech_start=event.speech_start,
                speech_end=event.speech_end,
                turn_started=event.at,
            )
            return
        turn_id = getattr(event, "turn_id", None)
        turn = self._turn(turn_id) if isinstance(turn_id, int) else None
        if turn is None:
            return
        match event:
            case TurnConfirmed():
                turn.confirmed = True
                turn.end_of_turn = event.at
                turn.speech_start = event.speech_start
                turn.speech_end = event.speech_end
            case TurnCancelled():
                turn.cancelled = event.reason
                if not turn.confirmed:
                    self.speculative_cancelled += 1
            case Transcript():
                turn.asr_final = event.at
                turn.transcript = event.text
                turn.language = event.language
            case EndOfTurnDecided():
                turn.end_of_turn_probability = event.probability
                turn.end_of_turn_text = event.text_verdict
            case TokenDelta() if turn.llm_first_token is None:
                turn.llm_first_token = event.at
            case PrefixReuse():
                turn.prompt_tokens = event.prompt_tokens
                turn.reused_tokens = event.reused_tokens
                turn.prefix_reused = event.reused
            case ReplyChunk() if turn.first_chunk_to_tts is None:
                turn.first_chunk_to_tts = event.at
                turn.first_chunk_text = event.text
                turn.reply_language = event.language
            case ReplyFinished():
                turn.reply_text = event.text
            case SpeechAudio():
                if turn.tts_first_audio is None:
                    turn.tts_first_audio = event.at
                turn.chunk_audio.append((event.at, event.samples.size / event.sample_rate))
            case PlaybackStarted():
                turn.first_sample_played = event.at
            case Acknowledged():
                turn.acknowledgement = event.text
                turn.acknowledged_at = event.at
            case AnswerStarted():
                turn.answer_played = event.at
            case PlaybackEnded():
                turn.playback_ended = event.at
                turn.heard_text = event.heard_text
                turn.interrupted = event.interrupted
            case BargeIn():
                turn.barge_in = event.at
            case TurnCommitted():
                turn.heard_text = event.heard_text
            case _:
                pass

    def confirmed_turns(self) -> list[TurnTimeline]:
        return [t for _, t in sorted(self.turns.items()) if t.confirmed]

    def dropped_turns(self) -> list[TurnTimeline]:
        """Turns dropped before they were confirmed (a pause that was not the end, echo,
        "mm-hm"): what a run's story needs beside the confirmed ones."""
        return [t for _, t in sorted(self.turns.items()) if not t.confirmed]
