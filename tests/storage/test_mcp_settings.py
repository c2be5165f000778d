"""The user's MCP servers in the settings file: kept across a save, and an entry that
breaks the rules (a server off the machine, two with one name) never gets into the app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.storage.settings import Settings, load_settings_with_notice, save_settings
from app.tools.mcp_config import (
    McpServer,
    McpToolChoice,
    UrlNotLocal,
    check_local_url,
    parse_command_line,
    server_prefix,
)

WEATHER = McpServer(name="Weather", command="uvx", args=("weather-mcp", "--units", "metric"),
                    env={"WEATHER_CACHE": "/tmp/w"},
                    tools={"forecast": McpToolChoice(enabled=True),
                           "set_alarm": McpToolChoice(enabled=True, always_allow=True)})
NOTES = McpServer(name="notes", url="http://127.0.0.1:8765/mcp")


def test_servers_and_their_ticks_round_trip_through_disk(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    settings = Settings(mcp_servers=(WEATHER, NOTES))
    save_settings(settings, path)
    loaded, notice = load_settings_with_notice(path)
    assert (loaded, notice) == (settings, "")
    assert loaded.mcp_servers[0].choice("forecast").enabled
    assert not loaded.mcp_servers[0].choice("unlisted").enabled  # off until ticked
    assert loaded.replace(muted=True).mcp_servers == settings.mcp_servers


def test_a_file_from_before_tool_servers_loads_with_none(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"version": 1, "muted": True}))
    assert load_settings_with_notice(path) == (Settings(muted=True), "")


@pytest.mark.parametrize("url", ["http://127.0.0.1:9000/mcp", "http://localhost/mcp",
                                 "https://[::1]:8443/mcp", "http://127.8.0.1/x",
                                 "HTTP://LOCALHOST:1/"])
def test_loopback_urls_are_accepted(url: str) -> None:
    assert check_local_url(url) == url


@pytest.mark.parametrize("url", ["http://192.168.1.4:9000/mcp", "https://example.com/mcp",
                                 "http://localhost.evil.com/", "http://0.0.0.0:80/",
                                 "http://[::ffff:8.8.8.8]/", "ftp://127.0.0.1/",
                                 "file:///etc/passwd", "127.0.0.1:9000"])
def test_urls_off_the_machine_are_refused_with_a_reason(url: str) -> None:
    with pytest.raises(UrlNotLocal) as refused:
        check_local_url(url)
    assert "127.0.0.1" in str(refused.value) or "http" in str(refused.value)


def test_a_hand_edited_remote_server_sets_the_file_aside_and_loses_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    bad = {"muted": True, "mcp_servers": [{"name": "x", "url": "https://example.com/mcp"}]}
    path.write_text(json.dumps(bad))
    settings, notice = load_settings_with_notice(path)
    assert settings == Settings() and "mcp_servers" in notice
    assert json.loads((tmp_path / "settings.json.bad").read_text()) == bad


def test_a_server_needs_exactly_one_way_in_and_a_distinct_name() -> None:
    with pytest.raises(ValidationError):
        McpServer(name="both", command="x", url="http://127.0.0.1/")
    with pytest.raises(ValidationError):
        McpServer(name="neither")
    with pytest.raises(ValidationError):
        McpServer(name="bad/name", command="x")
    with pytest.raises(ValidationError):
        Settings(mcp_servers=(NOTES, NOTES.model_copy(update={"name": "Notes"})))


def test_names_and_command_lines() -> None:
    assert server_prefix("My Weather") == "my_weather"
    assert server_prefix("3d-printer") == "_3d_printer"
    assert parse_command_line('npx -y "@acme/mcp server" --flag') == (
        "npx", ("-y", "@acme/mcp server", "--flag"))
    with pytest.raises(ValueError):
        parse_command_line("   ")
