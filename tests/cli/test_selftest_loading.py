"""The self-test times and blames engines by build_engines' on_loading roles, not its wording."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.adapters.errors import EngineLoadError
from app.cli.selftest import Report, load_engines


def test_a_failed_load_is_blamed_on_the_role_that_was_loading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import app.engines

    def build(
        choice: object,
        progress: Callable[[str], None] | None = None,
        on_loading: Callable[[str], None] | None = None,
    ) -> object:
        assert on_loading is not None
        on_loading("vad")
        if progress is not None:  # wording the self-test must not depend on
            progress("Loading speech recognizer")
        on_loading("asr")
        raise EngineLoadError("whisper model.bin is corrupt\nlong details")

    monkeypatch.setattr(app.engines, "build_engines", build)
    report = Report(write=lambda _line: None)
    assert load_engines(report, {"asr": "/m/whisper"}) is None
    by_name = {c.name: c for c in report.checks}
    assert by_name["vad"].status == "OK" and by_name["vad"].seconds is not None
    assert by_name["asr"].status == "FAIL"
    assert "load failed: EngineLoadError: whisper model.bin is corrupt  /m/whisper" in (
        by_name["asr"].detail
    )
    assert report.failed
