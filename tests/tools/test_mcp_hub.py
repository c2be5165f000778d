"""The user's MCP servers against a real stdio server written with the SDK
(``mcp_server.py``): listing, calls, names, ticks, and each way a server can fail."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from app.privacy import child_environment
from app.tools.mcp_hub import McpHub, ServersChanged
from app.tools.spec import ToolCall, ToolRegistry
from tests.tools.mcp_support import Faults, atlas, running_hub, settled, wait_for


def names(hub: McpHub) -> set[str]:
    return {tool.spec.name for tool in hub.tools()}


def test_a_servers_ticked_tools_are_offered_under_its_name(tmp_path: Path) -> None:
    with running_hub(atlas(tmp_path / "events.txt")) as hub:
        [status] = hub.status()
        assert status.state == "connected", status.message
        assert names(hub) == {"atlas__capital_of", "atlas__add_event", "atlas__sleep_for",
                              "atlas__crash", "atlas__junk", "atlas__babble",
                              "atlas__env_var"}
        capital = next(t for t in hub.tools() if t.spec.name == "atlas__capital_of")
        assert capital.spec.description == "The capital city of a country."
        assert capital.spec.parameters["required"] == ["country"]
        assert not capital.spec.side_effects  # the server says it is read-only
        effects = {t.spec.name for t in hub.tools() if t.spec.side_effects}
        assert effects == {"atlas__add_event", "atlas__crash"}  # crash says nothing: assumed


def test_a_read_only_tool_answers_and_a_changing_one_asks_first(tmp_path: Path) -> None:
    events = tmp_path / "events.txt"
    with running_hub(atlas(events)) as hub:
        registry = ToolRegistry(hub.tools())
        got = registry.run(ToolCall("atlas__capital_of", {"country": "Japan"}))
        assert got.ok and got.text == "Tokyo"
        assert not hub.needs_confirmation("atlas__capital_of")
        assert hub.needs_confirmation("atlas__add_event")
        assert hub.needs_confirmation("no_such_tool")
        done = registry.run(ToolCall("atlas__add_event", {"title": "Dentist", "day": "Friday"}))
        assert done.ok and events.read_text() == "Friday: Dentist\n"


def test_always_allow_is_saved_and_stops_the_question(tmp_path: Path) -> None:
    saved: list[ServersChanged] = []
    with running_hub(atlas(tmp_path / "e.txt"), save=saved.append) as hub:
        hub.allow_always("atlas__add_event")
        assert not hub.needs_confirmation("atlas__add_event")
        [changed] = saved
        [server] = changed.servers
        assert server.choice("add_event").always_allow and server.choice("add_event").enabled


def test_tools_are_off_until_ticked_and_unticking_withdraws_them(tmp_path: Path) -> None:
    changes: list[int] = []
    with running_hub(atlas(tmp_path / "e.txt", ticked=())) as hub:
        [status] = hub.status()
        assert len(status.listing.tools) == 8 and hub.tools() == []  # listed, not offered
        hub.subscribe(lambda: changes.append(len(hub.tools())))
        hub.choose("Atlas", "capital_of", enabled=True)
        assert names(hub) == {"atlas__capital_of"} and changes[-1] == 1
        hub.choose("Atlas", "capital_of", enabled=False)
        assert hub.tools() == [] and changes[-1] == 0


def test_a_hanging_tool_is_abandoned_within_the_bound(tmp_path: Path) -> None:
    faults = Faults()
    with running_hub(atlas(tmp_path / "e.txt"), on_fault=faults, call_timeout_s=1.5) as hub:
        registry = ToolRegistry(hub.tools())
        started = time.monotonic()
        got = registry.run(ToolCall("atlas__sleep_for", {"seconds": 30}, language="ja"))
        waited = time.monotonic() - started
        assert not got.ok and waited < 1.5 + 0.8
        assert "did not answer within" in got.text
        assert got.spoken == "すみません、Atlasのツールから時間内に返事がありませんでした。"
        assert faults.seen and faults.seen[-1][0] == "Atlas"


def test_a_cancelled_turn_stops_waiting_at_once(tmp_path: Path) -> None:
    with running_hub(atlas(tmp_path / "e.txt")) as hub:
        registry = ToolRegistry(hub.tools())
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        got = registry.run(ToolCall("atlas__sleep_for", {"seconds": 30}), cancel)
        assert not got.ok and "cancelled" in got.text
        assert time.monotonic() - started < 1.0


def test_a_crash_apologises_reports_and_the_next_call_restarts_it(tmp_path: Path) -> None:
    faults = Faults()
    with running_hub(atlas(tmp_path / "e.txt"), on_fault=faults) as hub:
        registry = ToolRegistry(hub.tools())
        got = registry.run(ToolCall("atlas__crash", {}, language="zh"))
        assert not got.ok and got.spoken == "抱歉，Atlas工具现在用不了。"
        [(server, message)] = faults.seen
        assert server == "Atlas" and "stopped" in message
        assert hub.status()[0].state == "stopped"
        assert "atlas__capital_of" in names(hub)  # still offered: the next call restarts it
        again = registry.run(ToolCall("atlas__capital_of", {"country": "Peru"}))
        assert again.ok and again.text == "Lima"
        assert hub.status()[0].state == "connected"


def test_a_server_that_cannot_restart_is_withdrawn(tmp_path: Path) -> None:
    faults, refuse = Faults(), tmp_path / "refuse"
    with running_hub(atlas(tmp_path / "e.txt", MCP_TEST_REFUSE=str(refuse)),
                     on_fault=faults) as hub:
        registry = ToolRegistry(hub.tools())
        registry.run(ToolCall("atlas__crash", {}))
        refuse.touch()  # broken since it last ran
        got = registry.run(ToolCall("atlas__capital_of", {"country": "Peru"}))
        assert not got.ok and got.spoken == "Sorry, the Atlas tool isn't working right now."
        assert hub.status()[0].state == "failed" and hub.tools() == []
        assert "could not start" in faults.seen[-1][1]
        assert "my data folder is gone" in hub.status()[0].message


def test_junk_answers_are_named_capped_or_apologised_for(tmp_path: Path) -> None:
    faults = Faults()
    with running_hub(atlas(tmp_path / "e.txt"), on_fault=faults) as hub:
        registry = ToolRegistry(hub.tools())
        image = registry.run(ToolCall("atlas__junk", {"kind": "image"}))
        assert not image.ok and "[an image]" in image.text
        assert image.spoken == "Sorry, the Atlas tool isn't working right now."
        assert faults.seen and "nothing a voice can use" in faults.seen[-1][1]
        huge = registry.run(ToolCall("atlas__junk", {"kind": "text"}))
        assert huge.ok and len(huge.text) < 4200 and "cut: the answer had" in huge.text


def test_a_server_that_will_not_start_says_why(tmp_path: Path) -> None:
    faults = Faults()
    broken = atlas(tmp_path / "e.txt").model_copy(
        update={"args": ("-c", "import sys; print('no config file', file=sys.stderr); "
                               "sys.exit(2)")})
    with running_hub(broken, on_fault=faults) as hub:
        [status] = hub.status()
        assert status.state == "failed" and "no config file" in status.message
        assert hub.tools() == []
        assert faults.seen[0][0] == "Atlas"


def test_a_missing_command_fails_quickly_and_close_does_not_hang(tmp_path: Path) -> None:
    missing = atlas(tmp_path / "e.txt").model_copy(update={"command": "/no/such/server"})
    hub = McpHub([missing])
    wait_for(hub, settled)
    assert hub.status()[0].state == "failed"
    started = time.monotonic()
    hub.close()
    assert time.monotonic() - started < 2.0


def test_close_stops_a_busy_server_within_its_bound(tmp_path: Path) -> None:
    hub = McpHub([atlas(tmp_path / "e.txt")])
    wait_for(hub, settled)
    tool = next(t for t in hub.tools() if t.spec.name == "atlas__sleep_for")
    threading.Thread(target=tool.run, args=({"seconds": 60}, threading.Event()),
                     daemon=True).start()
    started = time.monotonic()
    hub.close()
    assert time.monotonic() - started < 6.5
    started = time.monotonic()
    hub.close()  # twice (the window and the session both stop it): nothing to wait for
    assert time.monotonic() - started < 0.1
    got = tool.run({"seconds": 1}, threading.Event())  # a late call: an apology, at once
    assert not got.ok and "closed" in got.text


def test_a_line_that_is_not_the_protocol_does_not_break_the_session(tmp_path: Path) -> None:
    with running_hub(atlas(tmp_path / "e.txt")) as hub:
        registry = ToolRegistry(hub.tools())
        got = registry.run(ToolCall("atlas__babble", {}))
        assert got.ok and got.text == "still here"
        assert registry.run(ToolCall("atlas__capital_of", {"country": "France"})).text == "Paris"


def test_a_server_that_never_answers_at_start_fails_within_its_bound(tmp_path: Path) -> None:
    mute = atlas(tmp_path / "e.txt").model_copy(
        update={"args": ("-c", "import time; time.sleep(60)")})
    faults = Faults()
    started = time.monotonic()
    with running_hub(mute, on_fault=faults, connect_timeout_s=1.0) as hub:
        [status] = hub.status()
        assert status.state == "failed" and "did not answer within 1 s" in status.message
        assert time.monotonic() - started < 8.0
    assert time.monotonic() - started < 15.0  # closing it too


def test_a_server_gets_the_apps_privacy_switches(tmp_path: Path) -> None:
    env = child_environment({"DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1", "SECRET": "x"})
    assert env == {"DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1"}
    with running_hub(atlas(tmp_path / "e.txt"), env=env) as hub:
        registry = ToolRegistry(hub.tools())
        assert registry.run(ToolCall("atlas__env_var", {"name": "DO_NOT_TRACK"})).text == "1"
        assert registry.run(ToolCall("atlas__env_var", {"name": "SECRET"})).text == "unset"


def test_a_server_whose_tools_change_is_listed_again(tmp_path: Path) -> None:
    offered: list[list[str]] = []
    server = atlas(tmp_path / "e.txt", ticked=("grow", "extra_tool"))  # ticked ahead
    with running_hub(server) as hub:
        stop = hub.offer(lambda tools: offered.append([t.spec.name for t in tools]))
        assert offered == [["atlas__grow"]]
        assert ToolRegistry(hub.tools()).run(ToolCall("atlas__grow", {})).text == "grown"
        wait_for(hub, lambda _status: "atlas__extra_tool" in names(hub))
        assert offered[-1] == ["atlas__grow", "atlas__extra_tool"]
        stop()


def test_two_calls_after_a_crash_start_it_once(tmp_path: Path) -> None:
    faults = Faults()
    with running_hub(atlas(tmp_path / "e.txt"), on_fault=faults) as hub:
        registry = ToolRegistry(hub.tools())
        registry.run(ToolCall("atlas__crash", {}))
        starts: list[str] = []
        hub.subscribe(lambda: starts.append(hub.status()[0].state))
        answers: list[str] = []
        calls = [threading.Thread(target=lambda c=c: answers.append(registry.run(
            ToolCall("atlas__capital_of", {"country": c})).text)) for c in ("Peru", "Kenya")]
        for call in calls:
            call.start()
        for call in calls:
            call.join()
        assert sorted(answers) == ["Lima", "Nairobi"]
        assert starts.count("connected") == 1 and len(faults.seen) == 1
