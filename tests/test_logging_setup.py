"""The log file: private, and quiet (one line on stderr) when it cannot be written."""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

import pytest

from app.logging_setup import PrivateRotatingFileHandler


class _FullDisk:
    """A stream whose writes fail as on a full disk."""

    def write(self, text: str) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def flush(self) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    def tell(self) -> int:
        return 0

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def close(self) -> None:
        pass


def _record(text: str) -> logging.LogRecord:
    return logging.makeLogRecord({"msg": text, "levelno": logging.INFO, "levelname": "INFO"})


def test_a_full_disk_is_said_once_then_the_log_goes_quiet_until_it_works_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    handler = PrivateRotatingFileHandler(tmp_path / "hanasu.log", 1_000_000, 1)
    working = handler.stream
    handler.stream = _FullDisk()  # type: ignore[assignment]
    for i in range(10):
        handler.emit(_record(f"line {i}"))
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err, err
    assert "Traceback" not in err
    handler.stream = working
    handler.emit(_record("space again"))
    assert "space again" in (tmp_path / "hanasu.log").read_text()
    handler.stream = _FullDisk()  # type: ignore[assignment]
    handler.emit(_record("full again"))
    assert capsys.readouterr().err.count("\n") == 1  # a new failure is said again, once
    handler.stream = working
    handler.close()


def test_log_files_are_created_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        handler = PrivateRotatingFileHandler(tmp_path / "hanasu.log", 200, 2)
        for i in range(20):  # rotates: every new file is private too
            handler.emit(_record(f"line {i} " * 5))
        handler.close()
    finally:
        os.umask(old)
    files = sorted(tmp_path.iterdir())
    assert len(files) == 3
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}
