"""Opens Settings, Models, Tool servers and Voices from the window, applies saved settings
by restarting, and keeps a voice the pipeline learnt (Voices: "Learn my voice")."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject

from app.core.pipeline import VoicePipeline
from app.core.ports import SpeakerEncoder
from app.core.telemetry import VoiceLearnt
from app.core.voice_gate import VoicePrint
from app.storage.settings import Settings, SettingsError, save_settings
from app.storage.voice_prints import VoicePrintStore, keep_learnt
from app.ui import keyboard
from app.ui.models_dialog import ModelsDialog
from app.ui.plain import warn
from app.ui.session import Session
from app.ui.settings_dialog import SettingsDialog
from app.ui.tool_servers_dialog import ToolServersDialog
from app.ui.voices_dialog import MicrophoneSource, VoicesDialog
from app.ui.window import MainWindow

log = logging.getLogger(__name__)


class DialogLauncher(QObject):
    def __init__(self, window: MainWindow, session: Session,
                 restart: Callable[[Settings], None]) -> None:
        super().__init__(window)
        self._window = window
        self._session = session
        self._restart = restart
        self._models: ModelsDialog | None = None
        window.settings_requested.connect(self.open_settings)
        window.models_requested.connect(self.open_models)
        self._tool_servers: ToolServersDialog | None = None
        window.menus.tool_servers_action.triggered.connect(self.open_tool_servers)
        self._voices: VoicesDialog | None = None
        window.menus.voices_action.triggered.connect(self.open_voices)
        session.ready.connect(self._attach_voices)
        window.bridge.any_event.connect(self._on_event)

    def open_settings(self) -> None:
        dialog = SettingsDialog(self._window.settings, self._window)
        if dialog.exec() != SettingsDialog.DialogCode.Accepted or dialog.result_settings is None:
            return
        settings = dialog.result_settings
        try:
            save_settings(settings)
        except SettingsError as exc:
            warn(self._window, "Settings not saved", str(exc))
        self._restart(settings)

    def open_models(self) -> None:
        if self._models is None or not self._models.isVisible():
            self._models = ModelsDialog(self._window, settings=self._window.settings,
                                        on_settings=self._window.store_settings)
            keyboard.prepare(self._models)
        self._models.show()
        self._models.raise_()

    def open_tool_servers(self) -> None:
        """The session's MCP servers (changes apply at once; the hub saves them)."""
        if self._tool_servers is None or not self._tool_servers.isVisible():
            self._tool_servers = ToolServersDialog(self._session.mcp, self._window)
        self._tool_servers.show()
        self._tool_servers.raise_()

    def open_voices(self) -> VoicesDialog:
        """The enrolled voices; a change reaches the running pipeline at once."""
        if self._voices is None or not self._voices.isVisible():
            def changed(prints: Sequence[VoicePrint]) -> None:
                running = self._session.pipeline
                if running is not None:
                    running.use_voice_prints(prints)

            encoder, source = _recording(self._session.pipeline)
            persona = self._window.persona
            self._voices = VoicesDialog(VoicePrintStore(), encoder, source, changed,
                                        persona.name, self._window, persona.main_language,
                                        self._window.settings.learn_voice, self.set_learning)
        self._voices.show()
        self._voices.raise_()
        return self._voices

    def set_learning(self, on: bool) -> None:
        """The user lets the app learn their voice from what they say (or stops it)."""
        window = self._window
        window.store_settings(window.settings.replace(learn_voice=on))
        running = self._session.pipeline
        if running is not None:
            running.learn_voice(on and not VoicePrintStore().all())

    def _on_event(self, item: object) -> None:
        if not isinstance(item, VoiceLearnt):
            return
        prints, problem = keep_learnt(item.voice, VoicePrintStore())
        running = self._session.pipeline
        if running is not None:
            running.use_voice_prints(prints)
        window = self._window
        window.store_settings(window.settings.replace(learn_voice=False))
        window.add_notice(problem or (
            f"{window.persona.name} knows your voice now: other voices are answered only when "
            f"they say “{window.persona.name}” (Hanasu → Voices to see or delete it)."))
        if self._voices is not None:
            self._voices.learnt(item.voice)

    def _attach_voices(self, pipeline: VoicePipeline) -> None:
        """A Voices dialog opened while the engines loaded can record once they are up."""
        if self._voices is not None and self._voices.isVisible():
            self._voices.attach(*_recording(pipeline))


def _recording(pipeline: VoicePipeline | None) -> tuple[
        SpeakerEncoder | None, Callable[[], MicrophoneSource] | None]:
    """What the Voices dialog records with: the pipeline's speaker encoder and microphone."""
    if pipeline is None:
        return None, None
    return pipeline.engines.speaker, lambda: MicrophoneSource(pipeline)
