"""Settings survive a round trip, and a bad or unwritable file never loses the user's data."""

from __future__ import annotations

import errno
import json
import logging
import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.core.barge_in import BargeInPolicy
from app.core.endpointing import EndpointConfig
from app.storage.settings import (
    CURRENT_VERSION,
    Settings,
    SettingsError,
    endpoint_config,
    load_settings,
    migrate,
    pipeline_config,
    save_settings,
    settings_path,
)


@pytest.fixture()
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "config"
    monkeypatch.setenv("HANASU_CONFIG_DIR", str(folder))
    return folder


def test_settings_path_follows_config_dir_override(config_dir: Path) -> None:
    assert settings_path() == config_dir / "settings.json"


def test_missing_file_gives_defaults(config_dir: Path) -> None:
    assert load_settings() == Settings()
    assert not config_dir.exists()


def test_round_trip_through_disk(config_dir: Path) -> None:
    changed = Settings(
        input_device="USB Mic",
        output_device="Headphones",
        vad_threshold=0.7,
        end_of_turn_ms=900,
        barge_in=False,
        llm_path="~/models/llm.gguf",
        n_gpu_layers=0,
        tts_voice="af_heart",
        tts_speed=1.25,
        persona_id="tutor",
        muted=True,
        show_hud=True,
    )
    save_settings(changed)
    assert settings_path().is_file()
    assert load_settings() == changed
    assert sorted(p.name for p in config_dir.iterdir()) == ["settings.json"]  # no temp left


def test_version_field_is_stored(config_dir: Path) -> None:
    save_settings(Settings())
    stored = json.loads(settings_path().read_text(encoding="utf-8"))
    assert stored["version"] == CURRENT_VERSION == Settings().version


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[1, 2]", b'{"vad_threshold": 7}', b"\xff\xfe\x00garbage",
     b'{"version": 0}'],
    ids=["broken-json", "not-an-object", "out-of-range", "not-utf8", "bad-version"],
)
def test_bad_file_gives_defaults_and_is_kept(
    config_dir: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    config_dir.mkdir()
    settings_path().write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="app.storage.settings"):
        assert load_settings() == Settings()
    bad = config_dir / "settings.json.bad"
    assert bad.read_bytes() == content
    assert not settings_path().exists()
    assert "invalid" in caplog.text


def test_second_bad_file_does_not_overwrite_the_first(config_dir: Path) -> None:
    config_dir.mkdir()
    settings_path().write_text("first", encoding="utf-8")
    load_settings()
    settings_path().write_text("second", encoding="utf-8")
    load_settings()
    assert (config_dir / "settings.json.bad").read_text(encoding="utf-8") == "first"
    assert (config_dir / "settings.json.bad.1").read_text(encoding="utf-8") == "second"


def test_unknown_keys_are_ignored(config_dir: Path) -> None:
    config_dir.mkdir()
    settings_path().write_text(json.dumps({"version": 1, "muted": True, "future": 3}))
    assert load_settings() == Settings(muted=True)


def test_a_file_from_before_the_desktop_pet_loads_with_its_defaults(config_dir: Path) -> None:
    config_dir.mkdir()
    settings_path().write_text(json.dumps({"version": 1, "muted": True, "show_hud": True}))
    loaded = load_settings()
    assert (loaded.muted, loaded.show_hud) == (True, True)
    assert (loaded.pet_mode, loaded.pet_size, loaded.pet_position) == (False, 200, None)


def test_the_pet_place_round_trips_through_disk(config_dir: Path) -> None:
    save_settings(Settings(pet_mode=True, pet_size=300, pet_position=(-40, 900)))
    assert json.loads(settings_path().read_text())["pet_position"] == [-40, 900]
    loaded = load_settings()
    assert (loaded.pet_mode, loaded.pet_size, loaded.pet_position) == (True, 300, (-40, 900))


@pytest.mark.parametrize(
    "field,value",
    [("vad_threshold", 0.05), ("vad_threshold", 0.99), ("end_of_turn_ms", 100),
     ("end_of_turn_ms", 2500), ("tts_speed", 0.4), ("tts_speed", 2.5),
     ("pet_size", 119), ("pet_size", 481), ("pet_position", (0, 10**9)),
     ("pet_position", (1, 2, 3))],
)
def test_out_of_range_value_is_rejected(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        Settings.model_validate({field: value})
    with pytest.raises(ValidationError):
        Settings().replace(**{field: value})


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        setattr(settings, "muted", True)  # noqa: B010 (the plugin-free way to try it)
    assert settings.replace(muted=True).muted is True


def test_disk_full_raises_one_line_error_and_keeps_old_file(
    config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_settings(Settings(muted=True))
    before = settings_path().read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(SettingsError) as caught:
        save_settings(Settings(muted=False))
    message = str(caught.value)
    assert "\n" not in message
    assert "No space left on device" in message
    assert str(settings_path()) in message
    assert settings_path().read_bytes() == before
    assert sorted(p.name for p in config_dir.iterdir()) == ["settings.json"]


def test_unwritable_location_raises_settings_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(SettingsError, match="Could not save settings"):
        save_settings(Settings(), blocker / "settings.json")


def test_migrate_keeps_current_and_accepts_unversioned() -> None:
    assert migrate({"version": 1, "muted": True}) == {"version": 1, "muted": True}
    assert Settings.model_validate(migrate({"muted": True})).version == CURRENT_VERSION
    with pytest.raises(ValueError):
        migrate({"version": "one"})


def test_newer_file_is_read_as_far_as_known() -> None:
    assert Settings.model_validate(migrate({"version": 99, "muted": True})) == Settings(
        muted=True
    )


def test_endpoint_config_mapping() -> None:
    config = endpoint_config(Settings(vad_threshold=0.7, end_of_turn_ms=900))
    assert isinstance(config, EndpointConfig)
    assert config.threshold == 0.7
    assert config.end_of_turn_ms == 900
    # less sensitive speech detection makes interrupting harder too, in the same ratio
    over_reply, _ms = BargeInPolicy().speech_bar(config.threshold, config.min_speech_ms)
    default_over_reply, _ms = BargeInPolicy().speech_bar(EndpointConfig().threshold, 0)
    assert default_over_reply == 0.35  # the tuned default, at the default sensitivity
    assert default_over_reply < over_reply < config.threshold
    default = endpoint_config(Settings())
    assert default == EndpointConfig()


def test_pipeline_config_carries_barge_in() -> None:
    assert pipeline_config(Settings(barge_in=False)).barge_in is False
    assert pipeline_config(Settings()).endpoint == EndpointConfig()
