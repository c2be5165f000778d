"""Errors of the model subsystem.

Every failure the user can fix (missing file, truncated download, full disk) is a ModelError whose
message is one readable line, so the CLI and the UI can show it as is, without a traceback.
"""

from __future__ import annotations


class ModelError(Exception):
    """A model is missing, broken, or could not be downloaded; str(err) is the user message."""


class DownloadCancelled(ModelError):
    """The user cancelled a download; the `.part` file stays so the next call resumes."""
