"""Feeds the live transcript from the bridge: a confirmed or cancelled turn, its words as
recognised, the reply's tokens and chunks, and how far playback has got (the avatar's
mouth follows the same level, its face each sentence's emotion and the user's pauses)."""

from __future__ import annotations

from app.core.turn_commands import NOT_THE_USER, OTHER_VOICE, REOPENED
from app.ui.avatar import AvatarWidget
from app.ui.bridge import EventBridge
from app.ui.transcript import TranscriptView


class TranscriptFeed:
    def __init__(self, bridge: EventBridge, transcript: TranscriptView,
                 avatar: AvatarWidget) -> None:
        self.transcript, self.avatar = transcript, avatar
        view, model = transcript, transcript.model
        bridge.turn_confirmed.connect(lambda t: view.refresh(model.confirmed(t)))
        bridge.turn_cancelled.connect(self._on_turn_cancelled)
        bridge.transcript.connect(lambda t, text: view.refresh(model.transcript(t, text)))
        bridge.token.connect(lambda t, text: model.token(t, text))
        bridge.chunk_audio.connect(lambda t, i, text, s: model.chunk_audio(t, i, text, s))
        bridge.playback_level.connect(self._on_playback_level)
        bridge.playback_started.connect(
            lambda t, at: view.refresh(model.playback_started(t, at)))
        bridge.playback_ended.connect(
            lambda t, heard, interrupted: view.refresh(model.playback_ended(t, heard,
                                                                            interrupted)))
        bridge.expression.connect(lambda _t, emotion, _at: avatar.cue(emotion))
        bridge.mouth.connect(avatar.mouth_cue)
        bridge.playback_ended.connect(lambda *_: avatar.end_of_reply())
        bridge.speech_paused.connect(avatar.nod)

    def _on_turn_cancelled(self, turn_id: int, reason: str) -> None:
        if reason in (REOPENED, NOT_THE_USER, OTHER_VOICE):  # joined on / not the user
            self.transcript.remove(turn_id)
        else:
            self.transcript.model.cancelled(turn_id)

    def _on_playback_level(self, level: float, at: float) -> None:
        self.avatar.set_level(level)
        entry = self.transcript.model.playback_position(at)
        if entry is not None:
            self.transcript.refresh(entry)
