"""The main window: persona sidebar, the avatar, the live transcript and a few quiet controls.

There is deliberately no record or push-to-talk control: the app is always listening, and
the only microphone control is Mute (Ctrl+M). The window reacts to bridge signals (GUI
thread) and talks to the pipeline only through its thread-safe methods.
"""

from __future__ import annotations

import html
import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.core.events import AssistantState
from app.core.pipeline import VoicePipeline, llm_language_notice
from app.core.telemetry import EngineNotice, ReplyFailed, TurnTimed
from app.core.turn_commands import NOT_THE_USER, REOPENED
from app.personas.loader import PersonaLibrary
from app.personas.model import Persona
from app.personas.switch import persona_switch
from app.storage.keeper import Keeper
from app.storage.settings import Settings
from app.ui import icons, keyboard
from app.ui.avatar import AvatarWidget
from app.ui.bridge import EventBridge
from app.ui.cards import Banner, ProgressCard, card, section_label
from app.ui.conversations import Conversations
from app.ui.fonts import missing_font_notice
from app.ui.heartbeat import StallMonitor
from app.ui.hud import LatencyHud
from app.ui.meter import LevelMeter
from app.ui.notices import Notice, NoticeArea
from app.ui.persona_actions import PersonaActions
from app.ui.readiness import Readiness
from app.ui.sidebar import PersonaSidebar, load_picture
from app.ui.transcript import TranscriptView

log = logging.getLogger(__name__)

STATES_KEPT = 256

STATUS_TEXT = {
    AssistantState.IDLE: "Ready — just start speaking",
    AssistantState.LISTENING: "Listening…",
    AssistantState.THINKING: "Thinking…",
    AssistantState.SPEAKING: "Speaking",
    AssistantState.MUTED: "Microphone muted (Ctrl+M to unmute)",
    AssistantState.ERROR: "Something went wrong",
}

SaveSettings = Callable[[Settings], None]


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
        self._save = save_settings
        self._saver = ThreadPoolExecutor(max_workers=1, thread_name_prefix="settings-save")
        self.bridge = EventBridge(self)
        self.pipeline: VoicePipeline | None = None
        self.persona = self._initial_persona()
        self.pipeline_state = AssistantState.IDLE
        self.device_error = ""
        self.load_error = ""
        self._stage_banner = False
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
        self._build_actions()
        self.conversations = Conversations(self, keeper) if keeper is not None else None
        """Saved conversations and memories (None: nothing is kept, as in older tests)."""
        self._connect_bridge()
        self.persona_actions = PersonaActions(self)
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
        side.setFixedWidth(270)
        side_layout.addWidget(section_label("Personas"))
        self.sidebar = PersonaSidebar(self.library.personas)
        self.sidebar.persona_selected.connect(self._on_persona_selected)
        side_layout.addWidget(self.sidebar, 1)
        side_layout.addWidget(self.sidebar.buttons)  # New, Edit, Duplicate, Delete
        outer.addWidget(side)

        main = QVBoxLayout()
        main.setSpacing(12)
        main.addLayout(self._build_header())
        self.banner = Banner()
        self.banner.action.connect(self._on_banner_action)
        main.addWidget(self.banner)
        main.addWidget(self.notices.panel)
        self.progress = ProgressCard()
        self.progress.setVisible(False)
        main.addWidget(self.progress)

        body = QHBoxLayout()
        body.setSpacing(16)
        stage, stage_layout = card(margins=14)
        self.avatar = AvatarWidget(self.persona.avatar)
        stage_layout.addWidget(self.avatar, 1)
        self.hud = LatencyHud()
        stage_layout.addWidget(self.hud)
        body.addWidget(stage, 5)
        talk, talk_layout = card(margins=14)
        talk_layout.addWidget(section_label("Conversation"))
        self.transcript = TranscriptView()
        talk_layout.addWidget(self.transcript, 1)
        body.addWidget(talk, 6)
        main.addLayout(body, 1)
        outer.addLayout(main, 1)
        self.setCentralWidget(root)

    def _build_header(self) -> QHBoxLayout:
        header = QHBoxLayout()
        header.setSpacing(12)
        names = QVBoxLayout()
        names.setSpacing(0)
        self.title = QLabel()
        self.title.setObjectName("title")
        self.title.setTextFormat(Qt.TextFormat.PlainText)  # a card's name is not markup
        self.status = QLabel()
        self.status.setObjectName("statusText")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # "Getting <name> ready"
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        names.addWidget(self.title)
        names.addWidget(self.status)
        header.addLayout(names, 1)
        self.meter = LevelMeter()
        header.addWidget(self.meter, 0, Qt.AlignmentFlag.AlignVCenter)
        self.mute_button = QToolButton()
        self.mute_button.setObjectName("muteButton")
        self.mute_button.setCheckable(True)
        self.mute_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.mute_button.setIconSize(QSize(18, 18))
        self.mute_button.setToolTip("Mute or unmute the microphone (Ctrl+M)")
        self.mute_button.toggled.connect(self.set_muted)
        header.addWidget(self.mute_button)
        self.hud_button = QToolButton()
        self.hud_button.setObjectName("hudButton")
        self.hud_button.setCheckable(True)
        self.hud_button.setIcon(icons.gauge_icon())
        self.hud_button.setIconSize(QSize(18, 18))
        self.hud_button.setToolTip("Show latency (Ctrl+L)")
        header.addWidget(self.hud_button)
        header.addWidget(self.notices.button)
        return header

    def _build_actions(self) -> None:
        menu = self.menuBar().addMenu("&Hanasu")
        settings = QAction("&Settings…", self)
        settings.setShortcut(QKeySequence("Ctrl+,"))  # Linux's Preferences binding is empty
        settings.triggered.connect(self.settings_requested.emit)
        models = QAction("&Models…", self)
        models.triggered.connect(self.models_requested.emit)
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(QApplication.quit)
        menu.addActions([settings, models])
        menu.addSeparator()
        menu.addAction(self.quit_action)
        view = self.menuBar().addMenu("&View")
        self.mute_action = QAction("&Mute microphone", self)
        self.mute_action.setCheckable(True)
        self.mute_action.setShortcut(QKeySequence("Ctrl+M"))
        self.mute_action.toggled.connect(self.set_muted)
        self.hud_action = QAction("&Latency HUD", self)
        self.hud_action.setCheckable(True)
        self.hud_action.setShortcut(QKeySequence("Ctrl+L"))
        self.hud_action.toggled.connect(self.set_hud_visible)
        self.hud_button.toggled.connect(self.hud_action.setChecked)
        view.addActions([self.mute_action, self.hud_action])
        self.addActions([settings, self.mute_action, self.hud_action, self.quit_action])

    def _connect_bridge(self) -> None:
        b, model = self.bridge, self.transcript.model
        b.state_changed.connect(self._on_state)
        b.input_level.connect(self.meter.set_level)
        b.playback_level.connect(self._on_playback_level)
        b.turn_confirmed.connect(lambda t: self.transcript.refresh(model.confirmed(t)))
        b.turn_cancelled.connect(self._on_turn_cancelled)
        b.transcript.connect(lambda t, text: self.transcript.refresh(model.transcript(t, text)))
        b.token.connect(lambda t, text: model.token(t, text))
        b.chunk_audio.connect(lambda t, i, text, s: model.chunk_audio(t, i, text, s))
        b.playback_started.connect(self._on_playback_started)
        b.playback_ended.connect(self._on_playback_ended)
        b.stage_failed.connect(self._on_stage_failed)
        b.other.connect(self._on_other)

    def _on_turn_cancelled(self, turn_id: int, reason: str) -> None:
        if reason in (REOPENED, NOT_THE_USER):  # joined to the next turn / not the user
            self.transcript.remove(turn_id)
        else:
            self.transcript.model.cancelled(turn_id)

    # ---- pipeline ---------------------------------------------------------------------

    def attach_pipeline(self, pipeline: VoicePipeline, persona_id: str | None = None) -> None:
        """Use a started pipeline (its observer must already post to ``self.bridge``).

        ``persona_id`` is the persona it was built for; if the user picked another one
        while the engines loaded, the pipeline switches to it now.
        """
        self.pipeline = pipeline
        fresh = (persona_id is not None and persona_id != self.persona.id
                 and self.conversations is None)
        self._switch_pipeline(self.persona, fresh)  # also on first attach
        if self.conversations is not None:
            self.conversations.attach(pipeline)
        self.load_error = ""
        self.progress.hide()
        if not self.device_error:
            self.banner.hide()
        pipeline.set_muted(self.mute_action.isChecked())
        self.readiness.expect(pipeline, self.persona.name)
        for notice in getattr(pipeline.engines, "notices", ()):  # e.g. a voice fallback
            self.add_notice(str(notice))
        self._refresh_avatar()

    def add_notice(self, text: str) -> None:
        """Something the user should know, shown quietly in the notice area (GUI thread;
        other threads post a ``Notice`` to ``self.bridge``)."""
        self.notices.add(text)

    def detach_pipeline(self) -> None:
        self.pipeline = None
        self.readiness.forget()

    def show_progress(self, message: str) -> None:
        self.progress.set_message(message)
        self.status.setText(message)

    def show_load_error(self, message: str) -> None:
        """Missing or corrupt models: a clear message and the avatar's error face, no crash."""
        self.load_error = message
        self.progress.hide()
        self.banner.show_message(f"<b>The voice engines could not start.</b><br>"
                                 f"{html.escape(message)}", "Models…")
        self._refresh_avatar()

    def set_device_status(self, ok: bool, message: str) -> None:
        if ok:
            self.device_error = ""
            if not self.load_error:
                self.banner.hide()
        else:
            self.device_error = message or "The audio device stopped working."
            self.banner.show_message(f"<b>Audio device problem.</b> "
                                     f"{html.escape(self.device_error)}", "Settings…")
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
        self.avatar.set_avatar_style(persona.avatar)
        self.avatar.set_picture(load_picture(self.library.image_path(persona), 512))
        self.title.setText(persona.name)
        if self.conversations is not None:  # the persona's own conversation, resumed
            self.conversations.show(persona)
        else:
            self.transcript.reset(persona.greeting, persona.avatar.accent)
        if switch_pipeline:
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
        notice = llm_language_notice(self.pipeline.engines, persona.name,
                                     persona.spoken_languages())
        if notice is not None:  # the embedded model cannot hold a Japanese conversation
            self.add_notice(notice)
        font_notice = missing_font_notice(persona.spoken_languages())
        if font_notice is not None:  # Japanese words drawn as empty boxes otherwise
            self.add_notice(font_notice)

    def _on_banner_action(self) -> None:
        if self.banner.button.text().startswith("Models"):
            self.models_requested.emit()
        else:
            self.settings_requested.emit()

    def store_settings(self, settings: Settings) -> None:
        """Keep and save settings that take effect without a restart (the Models dialog's)."""
        self._store(settings)

    def _store(self, settings: Settings) -> None:
        """Keep the new settings and write them off the GUI thread (the write fsyncs)."""
        self.settings = settings
        if self._save is not None:
            self._saver.submit(_save_quietly, self._save, settings, self.bridge.post)

    # ---- pipeline events (GUI thread) --------------------------------------------------

    def _on_state(self, state: AssistantState) -> None:
        self.pipeline_state = state
        if self._stage_banner and state in (AssistantState.LISTENING, AssistantState.SPEAKING):
            self._stage_banner = False  # the pipeline recovered on the next turn
            if not (self.load_error or self.device_error):
                self.banner.hide()
        self.states_seen.append(state)
        self._refresh_avatar()

    def _refresh_avatar(self) -> None:
        error = self.load_error or self.device_error
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
        if self.load_error:
            self.status.setText("The voice engines could not start")
        elif self.device_error:
            self.status.setText("Audio device problem")
        elif state is AssistantState.IDLE and self.readiness.waiting_for is not None:
            self.status.setText(f"Getting {self.readiness.waiting_for} ready…")
        else:
            self.status.setText(STATUS_TEXT[state])

    def _on_playback_level(self, level: float, at: float) -> None:
        self.avatar.set_level(level)
        entry = self.transcript.model.playback_position(at)
        if entry is not None:
            self.transcript.refresh(entry)

    def _on_playback_started(self, turn_id: int, at: float) -> None:
        self.transcript.refresh(self.transcript.model.playback_started(turn_id, at))

    def _on_playback_ended(self, turn_id: int, heard: str, interrupted: bool) -> None:
        entry = self.transcript.model.playback_ended(turn_id, heard, interrupted)
        self.transcript.refresh(entry)

    def _on_stage_failed(self, stage: str, message: str) -> None:
        log.warning("stage %s failed: %s", stage, message)
        if self.load_error or self.device_error:
            return  # the more basic problem keeps the banner
        self._stage_banner = True
        self.banner.show_message(f"<b>The {html.escape(stage)} stage failed.</b> "
                                 f"{html.escape(message)}")

    def _on_other(self, item: object) -> None:
        if isinstance(item, TurnTimed):  # a copy: the recorder stays the controller's
            self.hud.show_turn(item.timeline)
            return
        if isinstance(item, Notice):
            self.add_notice(item.text)
            return
        if isinstance(item, EngineNotice):  # e.g. a language's voice fell back to eSpeak
            self.add_notice(item.message)
            return
        if isinstance(item, ReplyFailed):  # the persona said sorry aloud; here is why
            self.add_notice(f"{self.persona.name} could not answer and apologised: "
                            f"{item.message}")
            return
        ok, message = getattr(item, "ok", None), getattr(item, "message", None)
        if isinstance(ok, bool) and isinstance(message, str):
            self.set_device_status(ok, message)

    # ---- window ----------------------------------------------------------------------

    @property
    def max_ui_stall_ms(self) -> float:
        """Worst GUI-thread stall seen (ms); the target is < 50 ms during a turn."""
        return self.stall.max_stall_ms

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the window quits the app (the tray offers Hide instead)."""
        super().closeEvent(event)
        QApplication.quit()

    def shutdown(self) -> None:
        """At exit: stop measuring, finish pending settings writes, log the worst stall."""
        self.stall.stop()
        self._saver.shutdown(wait=True)
        log.info("max UI stall %.1f ms", self.max_ui_stall_ms)


def _save_quietly(save: SaveSettings, settings: Settings, post: Callable[[object], None]) -> None:
    """Runs on the single writer thread (so saves stay in order); a failure is logged and
    posted to the window's notice area."""
    try:
        save(settings)
    except Exception as exc:
        log.warning("could not save settings: %s", exc)
        post(Notice(f"Your settings could not be saved: {exc}"))
