"""``hanasu run`` uses the user's MCP servers from the settings: started and waited for
before the first question, and none started when there are none."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.run import tool_servers
from app.storage.settings import Settings, save_settings, settings_path
from tests.tools.mcp_support import atlas


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HANASU_CONFIG_DIR", str(tmp_path / "config"))


def test_no_servers_no_hub() -> None:
    assert tool_servers() is None


def test_the_settings_servers_are_started_before_the_run(tmp_path: Path) -> None:
    save_settings(Settings(mcp_servers=(atlas(tmp_path / "e.txt", ticked=("capital_of",)),)),
                  settings_path())
    hub = tool_servers()
    assert hub is not None
    try:
        assert hub.status()[0].state == "connected"  # waited for
        assert [t.spec.name for t in hub.tools()] == ["atlas__capital_of"]
    finally:
        hub.close()


def test_a_server_that_fails_is_a_line_on_stderr(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    broken = atlas(tmp_path / "e.txt").model_copy(update={"command": "/no/such/server"})
    save_settings(Settings(mcp_servers=(broken,)), settings_path())
    hub = tool_servers()
    assert hub is not None
    hub.close()
    assert "hanasu: The tool server Atlas could not start" in capsys.readouterr().err
