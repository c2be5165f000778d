"""How a language model server is named and how its failures read: the API root for what a
user typed, that URL without credentials, and one line for every way a request fails
(nothing listening, a timeout, 401/403, 404, 429, 5xx, a cut stream). No line ever holds
the API key."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.adapters.errors import EngineLoadError, first_line


class LlmServerError(EngineLoadError):
    """The language model server failed; ``str(error)`` is one line fit for the window."""


def api_base(url: str) -> str:
    """The OpenAI API root for what a user typed: ``host:8080`` and ``http://host:8080``
    become ``http://host:8080/v1``; a URL with a path (``.../v1``) is kept as it is."""
    text = url.strip().rstrip("/")
    if not text:
        raise LlmServerError("no language model server URL is set")
    if "://" not in text:
        text = "http://" + text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LlmServerError(f"not an http(s) server URL: {redact(url)}")
    path = parts.path if parts.path not in ("", "/") else "/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def redact(url: str) -> str:
    """``url`` without any ``user:password@`` part, for messages and logs."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def server_message(response: httpx.Response) -> str:
    """The error text a server put in its body (OpenAI, FastAPI or plain), one short line."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        body = error if error is not None else body
    text = first_line(ValueError(str(body))) if str(body).strip() else response.reason_phrase
    return text[:200]


def is_context_overflow(message: str) -> bool:
    """Whether a server's refusal says the prompt does not fit its context."""
    text = message.lower()
    return "context" in text and any(
        w in text for w in ("exceed", "too long", "maximum", "length", "overflow")
    )


class ServerErrors:
    """The one-line errors of one server (``server`` is its redacted URL)."""

    def __init__(self, server: str, has_key: bool) -> None:
        self.server = server
        self.has_key = has_key

    def fail(self, what: str) -> LlmServerError:
        return LlmServerError(f"language model server {self.server}: {what}")

    def transport(self, exc: httpx.HTTPError, timeout_s: float) -> LlmServerError:
        if isinstance(exc, httpx.ConnectTimeout):
            return self.fail("no answer to connect (is it on and reachable?)")
        if isinstance(exc, httpx.ConnectError):
            return self.fail(f"cannot connect ({first_line(exc)}); is the server running?")
        if isinstance(exc, httpx.TimeoutException):
            return self.fail(f"sent nothing for {timeout_s:.0f} s (timed out)")
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return self.fail(f"the connection was cut ({first_line(exc)})")
        return self.fail(first_line(exc))

    def status(self, response: httpx.Response, model: str | None) -> LlmServerError:
        code = response.status_code
        said = server_message(response)
        if code in (401, 403):
            key = "the API key was refused" if self.has_key else "it needs an API key"
            return self.fail(f"{key} (HTTP {code}: {said})")
        if code == 404:
            return self.fail(f"no model {model!r} or no chat API here (HTTP 404: {said})")
        if code == 429:
            return self.fail(f"too many requests, try again shortly (HTTP 429: {said})")
        if code >= 500:
            return self.fail(f"server error (HTTP {code}: {said})")
        return self.fail(f"request refused (HTTP {code}: {said})")
