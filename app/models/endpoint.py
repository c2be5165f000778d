"""Where Hugging Face downloads come from: the hub, or a mirror the user names.

Users where huggingface.co is blocked or slow point the app at a mirror (hf-mirror.com, a
company proxy) with the standard ``HF_ENDPOINT`` environment variable or the app's own setting;
the setting wins. Only `hf` entries follow it: plain-URL entries keep their URL. The mirror
must serve the hub's `resolve` layout and its LFS sha256 headers; every file is still checked
against the manifest's hash (or the mirror's, when the manifest has none) before it is used.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping

from app.models.errors import ModelError

ENV = "HF_ENDPOINT"


def check_endpoint(url: str) -> str:
    """The URL without a trailing slash; ModelError when it is not an http(s) address."""
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelError(f"download mirror {url!r} is not an http:// or https:// address")
    if parts.query or parts.fragment:
        raise ModelError(f"download mirror {url!r} must not have a query or fragment")
    return url.rstrip("/")


def hub_endpoint(setting: str | None = None,
                 environ: Mapping[str, str] | None = None) -> str | None:
    """The mirror to download from (the setting, else ``HF_ENDPOINT``), or None for the hub."""
    env = os.environ if environ is None else environ
    chosen = (setting or "").strip() or env.get(ENV, "").strip()
    return check_endpoint(chosen) if chosen else None
