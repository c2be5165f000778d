"""The main window's problems and passing news: the red banner (engines that could not
start, an audio device problem, a failed stage) and the quiet notices and per-turn
timings other threads post through the bridge."""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING

from app.core.events import AssistantState
from app.core.telemetry import EngineNotice, ReplyFailed, TurnTimed
from app.storage.tool_desk import Rang
from app.tools.confirmation import PendingCall
from app.tools.mcp_hub import ServersChanged
from app.ui.cards import Banner
from app.ui.notices import Notice
from app.ui.tool_question import ToolQuestions

if TYPE_CHECKING:
    from app.ui.window import MainWindow

log = logging.getLogger(__name__)


class WindowAlerts:
    """Owns the banner; the more basic problem (engines, then the device) keeps it."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.banner = Banner()
        self.banner.action.connect(self._on_banner_action)
        self.load_error = ""
        self.device_error = ""
        self._stage_banner = False
        self.questions = ToolQuestions(window)
        """A tool that changes something, waiting for the user's yes."""

    @property
    def error(self) -> str:
        """What stops the assistant now ("" when nothing does)."""
        return self.load_error or self.device_error

    def show_load_error(self, message: str) -> None:
        self.load_error = message
        self.banner.show_message(f"<b>The voice engines could not start.</b><br>"
                                 f"{html.escape(message)}", "Models…")

    def engines_started(self) -> None:
        self.load_error = ""
        if not self.device_error:
            self.banner.hide()

    def set_device_status(self, ok: bool, message: str) -> None:
        if ok:
            self.device_error = ""
            if not self.load_error:
                self.banner.hide()
        else:
            self.device_error = message or "The audio device stopped working."
            self.banner.show_message(f"<b>Audio device problem.</b> "
                                     f"{html.escape(self.device_error)}", "Settings…")

    def stage_failed(self, stage: str, message: str) -> None:
        log.warning("stage %s failed: %s", stage, message)
        if self.error:
            return  # the more basic problem keeps the banner
        self._stage_banner = True
        self.banner.show_message(f"<b>The {html.escape(stage)} stage failed.</b> "
                                 f"{html.escape(message)}")

    def state_shown(self, state: AssistantState) -> None:
        """A stage's banner goes once the pipeline listens or speaks again."""
        if self._stage_banner and state in (AssistantState.LISTENING, AssistantState.SPEAKING):
            self._stage_banner = False
            if not self.error:
                self.banner.hide()

    def _on_banner_action(self) -> None:
        if self.banner.button.text().startswith("Models"):
            self.window.models_requested.emit()
        else:
            self.window.settings_requested.emit()

    def route(self, item: object) -> bool:
        """Show an item the bridge has no signal of its own for; True when it was one of
        the window's (a device status included)."""
        window = self.window
        if isinstance(item, TurnTimed):  # a copy: the recorder stays the controller's
            window.hud.show_turn(item.timeline)
        elif isinstance(item, Notice):
            window.add_notice(item.text)
        elif isinstance(item, Rang):  # a timer or reminder came due
            window.timers.rang(item)
        elif isinstance(item, PendingCall):  # a tool asks first: Allow / Always / Don't
            self.questions.ask(item)
        elif isinstance(item, ServersChanged):  # a tool server's ticks, from the hub
            window.store_settings(window.settings.replace(mcp_servers=item.servers))
        elif isinstance(item, EngineNotice):  # e.g. a language's voice fell back to eSpeak
            if not window.timers.already_shown(item.message):  # a ring said while muted
                window.add_notice(item.message)
        elif isinstance(item, ReplyFailed):  # the persona said sorry aloud; here is why
            window.add_notice(f"{window.persona.name} could not answer and apologised: "
                              f"{item.message}")
        else:
            ok, message = getattr(item, "ok", None), getattr(item, "message", None)
            if not (isinstance(ok, bool) and isinstance(message, str)):
                return False
            window.set_device_status(ok, message)
        return True
