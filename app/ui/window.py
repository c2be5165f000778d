"""The main window: persona sidebar, the avatar, the live transcript and a few quiet controls.

There is deliberately no record or push-to-talk control: the app is always listening, and
the only microphone control is Mute (Ctrl+M). The window reacts to bridge signals (GUI
thread) and talks to the pipeline only through its thread-safe methods.
"""

from __future__ import annotations

import logging
from collections import deque

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QApplication,
    QGridLayout,
    QHBoxLayout,
    QMainWindow,
    QVBoxLayout,
    QWidget,
)

from app.core.events import AssistantState
from app.core.pipeline import VoicePipeline, llm_language_notice
from app.personas.loader import PersonaLibrary
from app.personas.model import Persona
from app.personas.switch import persona_switch
from app.storage.keeper import Keeper
from app.storage.settings import Settings
from app.ui import icons, keyboard
from app.ui.avatar import AvatarWidget
from app.ui.bridge import EventBridge
from app.ui.cards import ProgressCard, card, section_label
from app.ui.close_to_tray import CloseToTray
from app.ui.conversations import Conversations
from app.ui.fonts import missing_font_notice
from app.ui.heartbeat import StallMonitor
from app.ui.hud import LatencyHud
from app.ui.live2d_host import Live2DStage
from app.ui.notices import NoticeArea
from app.ui.persona_actions import PersonaActions
from app.ui.pet_mode import PetMode, pet_button
from app.ui.readiness import Readiness
from app.ui.settings_writer import SaveSettings, SettingsWriter
from app.ui.sidebar import PersonaSidebar
from app.ui.transcript import TranscriptView
from app.ui.transcript_feed import TranscriptFeed
from app.ui.type_box import TypeBox
from app.ui.window_alerts import WindowAlerts
from app.ui.window_header import WindowHeader
from app.ui.window_menus import WindowMenus
from app.ui.window_timers import WindowTimers

log = logging.getLogger(__name__)

STATES_KEPT = 256
SIDEBAR_MIN = 220

STATUS_TEXT = {
    AssistantState.IDLE: "Ready — just start speaking",
    AssistantState.LISTENING: "Listening…",
    AssistantState.THINKING: "Thinking…",
    AssistantState.SPEAKING: "Speaking",
    AssistantState.MUTED: "Microphone muted (Ctrl+M to unmute)",
    AssistantState.ERROR: "Something went wrong",
}


class MainWindow(QMainWindow):
    """Everything the user sees. ``attach_pipeline`` connects it to a running pipeline."""

    settings_requested = Signal()
    models_requested = Signal()
    retry_requested = Signal()
    persona_changed = Signal(object)  # Persona
    muted_changed = Signal(bool)

    def __init__(self, library: PersonaLibrary, settings: Settings,
                 save_settings: SaveSettings | None = None,
                 parent: QWidget | None = None, keeper: Keeper | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Hanasu")
        self.resize(1180, 740)
        self.library = library
        self.settings = settings
        self.bridge = EventBridge(self)
        self._writer = SettingsWriter(save_settings, self.bridge.post)
        self.pipeline: VoicePipeline | None = None
        self.persona = self._initial_persona()
        self.pipeline_state = AssistantState.IDLE
        self.alerts = WindowAlerts(self)
        self.banner = self.alerts.banner
        self.states_seen: deque[AssistantState] = deque(maxlen=STATES_KEPT)
        """The last states shown (tests read it; bounded, it runs all evening)."""
        self.stall = StallMonitor(self)
        self.stall.start()
        self.setWindowIcon(icons.app_icon(self.persona.avatar))
        self.notices = NoticeArea()
        self.readiness = Readiness(self)
        """Says "Getting <name> ready…" until a switched-to persona can answer."""
        self.readiness.changed.connect(self._refresh_avatar)
        self._build_ui()
        self.live2d = Live2DStage(self)
        self.closing = CloseToTray(self)
        self.pet = PetMode(self)
        """The desktop pet: only the character, instead of this window."""
        self.timers = WindowTimers(self)
        self.menus = WindowMenus(self)
        self.mute_action = self.menus.mute_action
        self.hud_action = self.menus.hud_action
        self.quit_action = self.menus.quit_action
        self.conversations = Conversations(self, keeper) if keeper is not None else None
        """Saved conversations and memories (None: nothing is kept, as in older tests)."""
        self._connect_bridge()
        self.persona_actions = PersonaActions(self)
        self.menus.add_help_menu()  # after the Conversation and Personas menus
        self.sidebar.select(self.persona.id)
        self._apply_persona(self.persona, switch_pipeline=False)
        self.hud.setVisible(settings.show_hud)
        self.hud_action.setChecked(settings.show_hud)
        self._set_muted_ui(settings.muted)
        for message in library.messages:  # skipped persona files, replaced built-ins
            self.add_notice(message)
        keyboard.prepare(self)

    # ---- construction ----------------------------------------------------------------

    def _initial_persona(self) -> Persona:
        if self.settings.persona_id:
            for persona in self.library.personas:
                if persona.id == self.settings.persona_id:
                    return persona
        return self.library.default

    def _build_ui(self) -> None:
        root = QWidget()
        outer = QHBoxLayout(root)
        outer.setContentsMargins(18, 14, 18, 18)
        outer.setSpacing(16)

        side, side_layout = card(margins=12)
        side.setMinimumWidth(SIDEBAR_MIN)  # narrower than 270 on a half-screen window
        side.setMaximumWidth(270)
        side_layout.addWidget(section_label("Personas"))
        self.sidebar = PersonaSidebar(self.library.personas)
        self.sidebar.persona_selected.connect(self._on_persona_selected)
        side_layout.addWidget(self.sidebar, 1)
        side_layout.addWidget(self.sidebar.buttons)  # New, Edit, Duplicate, Delete
        outer.addWidget(side)

        main = QVBoxLayout()
        main.setSpacing(12)
        header = WindowHeader(self.notices.button)
        self.title, self.status, self.meter = header.title, header.status, header.meter
        self.mute_button, self.hud_button = header.mute_button, header.hud_button
        self.mute_button.toggled.connect(self.set_muted)
        main.addLayout(header.layout)
        main.addWidget(self.alerts.banner)
        main.addWidget(self.notices.panel)
        self.progress = ProgressCard()
        self.progress.setVisible(False)
        main.addWidget(self.progress)

        body = QHBoxLayout()
        body.setSpacing(16)
        stage, stage_layout = card(margins=14)
        self.avatar = AvatarWidget(self.persona.avatar)
        self.avatar.set_resting(self.persona.expression.resting)
        face = QGridLayout()  # the pet button in the avatar's corner: no width taken
        self.pet_button = pet_button()
        face.addWidget(self.avatar, 0, 0)
        face.addWidget(self.pet_button, 0, 0, Qt.AlignmentFlag.AlignTop
                       | Qt.AlignmentFlag.AlignRight)
        stage_layout.addLayout(face, 1)
        self.hud = LatencyHud()
        stage_layout.addWidget(self.hud)
        body.addWidget(stage, 5)
        talk, talk_layout = card(margins=14)
        talk_layout.addWidget(section_label("Conversation"))
        self.transcript = TranscriptView()
        talk_layout.addWidget(self.transcript, 1)
        self.type_box = TypeBox(self.send_typed)
        talk_layout.addWidget(self.type_box)
        body.addWidget(talk, 6)
        main.addLayout(body, 1)
        outer.addLayout(main, 1)
        self.setCentralWidget(root)

    def _connect_bridge(self) -> None:
        b = self.bridge
        b.state_changed.connect(self._on_state)
        b.input_level.connect(self.meter.set_level)
        b.stage_failed.connect(self.alerts.stage_failed)
        b.other.connect(self.alerts.route)
        self.transcript_feed = TranscriptFeed(b, self.transcript, self.avatar)

    # ---- pipeline ---------------------------------------------------------------------

    def attach_pipeline(self, pipeline: VoicePipeline, persona_id: str | None = None) -> None:
        """Use a started pipeline (its observer must already post to ``self.bridge``).

        ``persona_id`` is the persona it was built for; if the user picked another one
        while the engines loaded, the pipeline switches to it now.
        """
        self.pipeline = pipeline
        self.avatar.play_clock = pipeline.clock.now  # mouth cues are stamped on it
        fresh = (persona_id is not None and persona_id != self.persona.id
                 and self.conversations is None)
        self._switch_pipeline(self.persona, fresh)  # also on first attach
        if self.conversations is not None:
            self.conversations.attach(pipeline)
        self.alerts.engines_started()
        self.progress.hide()
        pipeline.set_muted(self.mute_action.isChecked())
        self.readiness.expect(pipeline, self.persona.name)
        for notice in getattr(pipeline.engines, "notices", ()):  # e.g. a voice fallback
            self.add_notice(str(notice))
        self._refresh_avatar()

    def send_typed(self, text: str) -> bool:
        """A typed request, answered like a spoken one; False while no engines run."""
        if self.pipeline is None:
            self.add_notice("The voice is still loading: send it again in a moment")
            return False
        self.pipeline.type_request(text)
        return True

    def add_notice(self, text: str) -> None:
        """Something the user should know, shown quietly in the notice area (GUI thread;
        other threads post a ``Notice`` to ``self.bridge``)."""
        self.notices.add(text)

    def detach_pipeline(self) -> None:
        if self.conversations is not None:
            self.conversations.stop_extraction()
        self.pipeline = None
        self.readiness.forget()

    def show_progress(self, message: str) -> None:
        self.progress.set_message(message)
        self.status.setText(message)

    def show_load_error(self, message: str) -> None:
        """Missing or corrupt models: a clear message and the avatar's error face, no crash."""
        self.progress.hide()
        self.alerts.show_load_error(message)
        self._refresh_avatar()

    def set_device_status(self, ok: bool, message: str) -> None:
        self.alerts.set_device_status(ok, message)
        self._refresh_avatar()

    # ---- user actions ----------------------------------------------------------------

    def set_muted(self, muted: bool) -> None:
        if self.mute_action.isChecked() == muted and self.mute_button.isChecked() == muted \
                and self.settings.muted == muted:
            return
        self._set_muted_ui(muted)
        if self.pipeline is not None:
            self.pipeline.set_muted(muted)
        self._store(self.settings.replace(muted=muted))
        self.muted_changed.emit(muted)

    @property
    def muted(self) -> bool:
        return self.mute_action.isChecked()

    def set_hud_visible(self, visible: bool) -> None:
        self.hud.setVisible(visible)
        self.hud_button.setChecked(visible)
        if visible != self.settings.show_hud:
            self._store(self.settings.replace(show_hud=visible))

    def _set_muted_ui(self, muted: bool) -> None:
        for widget in (self.mute_action, self.mute_button):
            widget.blockSignals(True)
            widget.setChecked(muted)
            widget.blockSignals(False)
        self.mute_button.setText("Muted" if muted else "Mute")
        self.mute_button.setIcon(icons.mic_icon(off=muted))
        self.meter.set_muted(muted)
        self._refresh_avatar()

    def _on_persona_selected(self, persona: Persona) -> None:
        if persona.id != self.persona.id:
            self._apply_persona(persona, switch_pipeline=True)

    def refresh_persona(self, persona: Persona) -> None:
        """The current persona's file changed (edited): use its new prompt, voice, face."""
        self._apply_persona(persona, switch_pipeline=True, greet=False)

    def _greet(self, persona: Persona) -> None:
        """Its greeting said aloud (unless turned off); an empty text stops the previous
        persona's greeting."""
        if self.pipeline is not None:
            speak = self.settings.speak_greeting and bool(persona.greeting.strip())
            self.pipeline.say(persona.greeting if speak else "")

    def _apply_persona(self, persona: Persona, switch_pipeline: bool,
                       greet: bool = True) -> None:
        """Switch conversation, voice and face at once; the prefix is warmed in the background."""
        self.persona = persona
        self.live2d.dress(persona)  # its face, layers or Live2D model; a notice if not shown
        self.title.setText(persona.name)
        if self.conversations is not None:  # the persona's own conversation, resumed
            self.conversations.show(persona)
        else:
            self.transcript.reset(persona.greeting, persona.avatar.accent)
        if switch_pipeline:
            self.hud.reset()  # the last turn shown was the previous persona's
            if self.pipeline is not None:
                self._switch_pipeline(persona, fresh=self.conversations is None)
                if greet:
                    self._greet(persona)
                self.readiness.expect(self.pipeline, persona.name)
            self._store(self.settings.replace(persona_id=persona.id))
            self.persona_changed.emit(persona)
        self._refresh_avatar()

    def _switch_pipeline(self, persona: Persona, fresh: bool) -> None:
        """Everything the persona sets, in one message (``fresh``: a new conversation with
        its prompt; else the conversations panel loads its saved one), and the notices its
        languages need."""
        if self.pipeline is None:
            return
        self.pipeline.use_persona(persona_switch(
            persona, fresh_conversation=fresh, own_voice=not self.settings.tts_voice,
            speed_factor=self.settings.tts_speed))
        languages = persona.spoken_languages()
        # the embedded model cannot hold a Japanese conversation; without a CJK font the
        # words are drawn as empty boxes
        for notice in (llm_language_notice(self.pipeline.engines, persona.name, languages),
                       missing_font_notice(languages)):
            if notice is not None:
                self.add_notice(notice)

    def store_settings(self, settings: Settings) -> None:
        """Keep and save settings that take effect without a restart (the Models dialog's)."""
        self._store(settings)

    def _store(self, settings: Settings) -> None:
        """Keep the new settings and write them off the GUI thread (the write fsyncs)."""
        self.settings = settings
        self._writer.submit(settings)

    # ---- pipeline events (GUI thread) --------------------------------------------------

    def _on_state(self, state: AssistantState) -> None:
        self.pipeline_state = state
        self.alerts.state_shown(state)
        self.states_seen.append(state)
        self._refresh_avatar()

    def _refresh_avatar(self) -> None:
        error = self.alerts.error
        if error:
            state = AssistantState.ERROR
        elif self.muted:
            state = AssistantState.MUTED
        elif self.pipeline_state is AssistantState.MUTED:
            state = AssistantState.IDLE
        else:
            state = self.pipeline_state
        self.avatar.set_state(state, error)
        if not self.progress.isHidden() and not error and not self.muted:
            return  # the loading message stays in the status line
        if self.alerts.load_error:
            self.status.setText("The voice engines could not start")
        elif self.alerts.device_error:
            self.status.setText("Audio device problem")
        elif state is AssistantState.IDLE and self.readiness.waiting_for is not None:
            self.status.setText(f"Getting {self.readiness.waiting_for} ready…")
        else:
            self.status.setText(STATUS_TEXT[state])

    # ---- window ----------------------------------------------------------------------

    @property
    def max_ui_stall_ms(self) -> float:
        """Worst GUI-thread stall seen (ms); the target is < 50 ms during a turn."""
        return self.stall.max_stall_ms

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the window quits the app, or hides it to the tray (``close_to_tray``)."""
        if self.closing.keep_running():
            event.ignore()
            self.hide()
            return
        super().closeEvent(event)
        QApplication.quit()

    def shutdown(self) -> None:
        """At exit: stop measuring, finish pending settings writes, log the worst stall."""
        self.pet.shutdown()  # its place, if it waits to be stored, first
        self.stall.stop()
        self._writer.shutdown()
        log.info("max UI stall %.1f ms", self.max_ui_stall_ms)

