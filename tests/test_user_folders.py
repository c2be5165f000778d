"""The suite keeps its hands off the real user folders."""

from __future__ import annotations

import os
import tempfile

from app.paths import user_config_dir, user_data_dir, user_log_dir


def test_the_suite_uses_temporary_user_folders() -> None:
    temp = os.path.realpath(tempfile.gettempdir())
    for folder in (user_data_dir(), user_config_dir(), user_log_dir()):
        assert os.path.realpath(folder).startswith(temp), folder
