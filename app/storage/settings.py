"""The user's settings: one typed, versioned model, stored as JSON under the config dir.

Loading never fails: a missing file gives defaults, and a corrupt or invalid one is moved
aside to ``settings.json.bad`` (so nothing the user wrote is lost) before defaults are used.
Saving is atomic (temp file + ``os.replace``), so a crash mid-write never leaves a
half-written file; a failed save raises ``SettingsError`` with a one-line message.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.errors import first_line
from app.paths import user_config_dir
from app.storage.atomic import write_text_atomically
from app.storage.safe_read import UnreadableFileError, UserFileError, parse_json, read_text
from app.tools.mcp_config import McpServer, check_servers

if TYPE_CHECKING:
    from app.core.endpointing import EndpointConfig
    from app.core.pipeline import PipelineConfig

log = logging.getLogger(__name__)

CURRENT_VERSION = 1
SETTINGS_FILE = "settings.json"
MAX_SETTINGS_BYTES = 256 * 1024
"""A real settings file is about 1 kB; anything this big is not ours."""
MAX_SETTINGS_DEPTH = 8
"""Settings are a flat object; a little room for future nested groups."""

PET_SIZE_MIN = 120
PET_SIZE_MAX = 480
"""The desktop pet's character, in pixels across (the mouse wheel stays within these)."""
Coordinate = Annotated[int, Field(ge=-100_000, le=100_000)]
"""A screen coordinate: any desktop fits, a corrupt file cannot overflow Qt's ints."""

_MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}
"""``_MIGRATIONS[n]`` turns a version-``n`` dict into a version-``n + 1`` dict."""


class SettingsError(RuntimeError):
    """Settings could not be saved; ``str(error)`` is one line fit for the UI."""


class Settings(BaseModel):
    """Everything the user can change. Frozen: change it with ``replace(...)``, which
    validates, so an out-of-range value can never get into a running app."""

    model_config = ConfigDict(frozen=True, extra="ignore", validate_default=True)

    version: int = Field(default=CURRENT_VERSION, ge=1)
    input_device: str | None = None
    """Microphone name; None follows the system default."""
    output_device: str | None = None
    vad_threshold: float = Field(default=0.5, ge=0.1, le=0.95)
    end_of_turn_ms: int = Field(default=480, ge=200, le=2000)
    barge_in: bool = True
    echo_cancellation: bool = True
    """Cancel the assistant's own voice from the microphone (needed on loudspeakers)."""
    smart_turn: bool = True
    """Let the Smart Turn model end the turn early when the user sounds finished."""
    llm_path: str | None = None
    asr_path: str | None = None
    tts_path: str | None = None
    n_gpu_layers: int | None = None
    """None lets the LLM adapter decide (offload everything when a GPU is usable)."""
    tts_voice: str | None = None
    tts_speed: float = Field(default=1.0, ge=0.5, le=2.0)
    llm_backend: Literal["local", "server"] = "local"
    """Where the language model runs: this computer, or an OpenAI-compatible server."""
    llm_server_url: str | None = None
    llm_server_model: str | None = None
    """None uses the first model the server lists."""
    llm_api_key: str | None = Field(default=None, repr=False)
    """Only ever in this file (owner-only, see ``save_settings``); never logged."""
    persona_id: str | None = None
    muted: bool = False
    show_hud: bool = False
    speak_greeting: bool = True
    """Say the persona's greeting aloud when it is picked in the sidebar."""
    memory_extraction: bool | None = None
    """Let the language model note facts about the user after each exchange, while the
    app is idle. None: on, except with the tiny embedded model (its notes are junk)."""
    learn_voice: bool = False
    """Learn the user's voice from what they say (Hanasu → Voices), with nobody enrolled;
    turned off again once it is learnt."""
    model_tier: str | None = None
    """The model tier picked in the Models dialog; None follows the recommendation."""
    model_endpoint: str | None = None
    """A Hugging Face mirror for downloads; None uses ``HF_ENDPOINT``, else the hub."""
    welcomed: bool = False
    """The first-run welcome page was shown (it is shown once, on the very first launch)."""
    close_to_tray: bool | None = None
    """Closing the window while a tray icon is shown hides it (True) or quits (False);
    None: ask on the first such close."""
    pet_mode: bool = False
    """The app shows only its character, the desktop pet, instead of the full window (it
    starts that way too). New fields with defaults need no migration: older files load."""
    pet_size: int = Field(default=200, ge=PET_SIZE_MIN, le=PET_SIZE_MAX)
    pet_position: tuple[Coordinate, Coordinate] | None = None
    """The pet's top-left corner on the desktop; None: the screen's bottom-right corner."""
    live2d_terms: bool | None = None
    """The user accepted (True) or declined (False) the Live2D Cubism licence terms, shown
    before a persona's Live2D model is first drawn; None: not asked yet."""
    mcp_servers: tuple[McpServer, ...] = ()
    """The user's tool servers (Model Context Protocol) and the tools ticked on each."""

    @field_validator("mcp_servers")
    @classmethod
    def _distinct_servers(cls, servers: tuple[McpServer, ...]) -> tuple[McpServer, ...]:
        return check_servers(servers)

    def replace(self, **changes: Any) -> Settings:
        """A validated copy with ``changes`` applied (raises pydantic's ValidationError)."""
        return Settings.model_validate({**self.model_dump(), **changes})


def migrate(data: dict[str, Any]) -> dict[str, Any]:
    """Bring a stored dict up to ``CURRENT_VERSION`` one step at a time.

    Files without a version predate versioning and count as version 1. A file from a
    newer app is loaded as far as this version understands it (unknown keys are ignored).
    """
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError(f"bad settings version: {version!r}")
    if version > CURRENT_VERSION:
        log.warning("settings file is from a newer version (%d); reading what is known", version)
        return {**data, "version": CURRENT_VERSION}
    while version < CURRENT_VERSION:
        data = _MIGRATIONS[version](data)
        version += 1
        data["version"] = version
    return data


def settings_path() -> Path:
    """Where settings live (``HANASU_CONFIG_DIR`` overrides the per-user config dir)."""
    return user_config_dir() / SETTINGS_FILE


def load_settings(path: Path | None = None) -> Settings:
    """The stored settings, or defaults when there are none or they cannot be used."""
    return load_settings_with_notice(path)[0]


def load_settings_with_notice(path: Path | None = None) -> tuple[Settings, str]:
    """The settings, and a one-line notice for the user when the file could not be used
    (empty when all is well). A file that is unusable (too big, nested too deep, not JSON,
    invalid values) is moved aside to ``settings.json.bad`` first, so the next launch starts
    clean and nothing the user wrote is lost."""
    path = path or settings_path()
    if not path.exists():
        return Settings(), ""
    try:
        raw = read_text(path, max_bytes=MAX_SETTINGS_BYTES)
    except UnreadableFileError as exc:
        notice = f"Could not read the settings file {path} ({exc}); using defaults."
        log.warning("%s", notice)
        return Settings(), notice
    except UserFileError as exc:
        return Settings(), _set_aside(path, str(exc))
    try:
        data = parse_json(raw, max_depth=MAX_SETTINGS_DEPTH)
        if not isinstance(data, dict):
            raise ValueError("it does not hold a JSON object")
        return Settings.model_validate(migrate(data)), ""
    except (ValueError, ValidationError, KeyError, TypeError) as exc:
        # UserFileError, JSONDecodeError and UnicodeDecodeError are ValueErrors too.
        return Settings(), _set_aside(path, _one_line(exc))


def _set_aside(path: Path, reason: str) -> str:
    """Move an unusable settings file aside; the one-line notice that says where and why."""
    kept = _keep_bad_file(path)
    log.warning("settings %s are invalid (%s); using defaults, kept the file as %s",
                path, reason, kept)
    if kept is None:
        return f"The settings file {path} could not be used ({reason}); using defaults."
    return (f"The settings file could not be used ({reason}); settings were reset to "
            f"defaults and the old file was kept as {kept}.")


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write ``settings`` atomically; raises SettingsError (disk full, read-only, ...)."""
    path = path or settings_path()
    text = json.dumps(settings.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    try:  # an API key is a secret: then the file is owner-only
        write_text_atomically(path, text, owner_only=bool(settings.llm_api_key))
    except OSError as exc:
        raise SettingsError(f"Could not save settings to {path}: {exc.strerror or exc}") from exc


def _keep_bad_file(path: Path) -> Path | None:
    """Move the unusable file aside without overwriting an earlier one."""
    target = path.with_name(path.name + ".bad")
    n = 1
    while target.exists():
        target = path.with_name(f"{path.name}.bad.{n}")
        n += 1
    try:
        os.replace(path, target)
    except OSError as exc:
        log.warning("could not keep the bad settings file %s: %s", path, exc)
        return None
    return target


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "settings"
        return f"{where}: {first['msg']}"
    return first_line(exc)


# ---- mapping onto the parts of the app that consume settings -------------------------


def endpoint_config(settings: Settings) -> EndpointConfig:
    """The endpointer's config (the bar over a reply follows the sensitivity setting in
    the barge-in rule's ratio, ``BargeInConfig.speech_threshold_ratio``)."""
    from app.core.endpointing import EndpointConfig

    return EndpointConfig(threshold=settings.vad_threshold,
                          end_of_turn_ms=settings.end_of_turn_ms)


APP_TIMELINES_KEPT = 64


def pipeline_config(settings: Settings) -> PipelineConfig:
    """The desktop app's pipeline config (endpointing, the barge-in switch, and a bounded
    timeline: the HUD shows the last turns, History keeps the words)."""
    from app.core.pipeline import PipelineConfig

    return PipelineConfig(endpoint=endpoint_config(settings), barge_in=settings.barge_in,
                          timelines_kept=APP_TIMELINES_KEPT)

