"""Reading an OpenAI-compatible chat stream: one server-sent-event line at a time into the
reply text, whether the reply finished, and the token counts servers add on the side
(llama-server ``timings``, OpenAI-style ``usage``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

DONE: Literal["done"] = "done"


@dataclass(frozen=True)
class StreamStats:
    """What one streamed reply looked like on the wire (for the bench and the logs)."""

    ttft_s: float | None
    """Request sent to the first piece of text."""
    chunks: int
    """Streamed chunks that carried reply text."""
    completion_tokens: int | None
    """As the server reports it; None when it does not."""
    prompt_tokens: int | None
    cached_tokens: int | None
    """Prompt tokens the server took from its cache; None when it does not say."""

    @property
    def tokens_per_chunk(self) -> float | None:
        if self.completion_tokens is None or self.chunks == 0:
            return None
        return self.completion_tokens / self.chunks


def parse_event(
    line: str, fail: Callable[[str], Exception]
) -> dict[str, Any] | Literal["done"] | None:
    """One SSE line as a JSON object, ``DONE`` for ``[DONE]``, or None (comments,
    keep-alives); an error the server streams, or a chunk that is not JSON, raises
    ``fail(what)``."""
    if line.startswith("error:"):
        raise fail(f"error mid-reply: {line[6:].strip()[:200]}")
    if not line.startswith("data:"):
        return None
    data = line[5:].strip()
    if data == "[DONE]":
        return DONE
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise fail("sent a stream chunk that is not JSON") from exc
    if not isinstance(event, dict):
        return None
    error = event.get("error")
    if error:
        said = error.get("message", error) if isinstance(error, dict) else error
        raise fail(f"error mid-reply: {str(said)[:200]}")
    return event


def _first_choice(event: dict[str, Any]) -> dict[str, Any] | None:
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    return choices[0]


def finished(event: dict[str, Any]) -> bool:
    """Whether this chunk ends the reply (it carries a finish reason)."""
    choice = _first_choice(event)
    return choice is not None and choice.get("finish_reason") is not None


def delta_text(event: dict[str, Any]) -> str:
    """The reply text this chunk adds ("" for none)."""
    choice = _first_choice(event)
    delta = choice.get("delta") if choice is not None else None
    content = delta.get("content") if isinstance(delta, dict) else None
    return content if isinstance(content, str) else ""


def prompt_stats(chunk: dict[str, Any]) -> tuple[int, int | None] | None:
    """``(prompt_tokens, cached_tokens or None)`` if this chunk reports them.

    llama-server puts ``timings`` (``cache_n`` from the cache + ``prompt_n`` evaluated) in
    its chunks; vLLM, llama-server and OpenAI put ``usage.prompt_tokens_details``."""
    timings = chunk.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
        cached = int(timings["cache_n"])
        return cached + int(timings.get("prompt_n") or 0), cached
    usage = chunk.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        details = usage.get("prompt_tokens_details")
        hit = details.get("cached_tokens") if isinstance(details, dict) else None
        return int(usage["prompt_tokens"]), int(hit) if isinstance(hit, int) else None
    return None


def completion_tokens(chunk: dict[str, Any]) -> int | None:
    """Reply tokens so far, where this chunk reports them."""
    usage = chunk.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
        return int(usage["completion_tokens"])
    timings = chunk.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("predicted_n"), int):
        return int(timings["predicted_n"])
    return None
