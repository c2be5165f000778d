"""What a chat request to an OpenAI-compatible server holds, and how to tell that a plain
OpenAI server refused the llama.cpp and vLLM fields in it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from app.adapters.openai_errors import server_message
from app.adapters.sampling import SamplingConfig
from app.adapters.template_guard import KNOWN_MARKERS, MarkerGuard
from app.core.ports import ChatMessage

GUARD = MarkerGuard(KNOWN_MARKERS)
"""A server renders its own template and may parse markers in content (llama-server does),
and we cannot read its vocabulary: the markers of the common templates are neutralized."""

EXTENSIONS = (
    "cache_prompt",
    "chat_template_kwargs",
    "timings_per_token",
    "stream_options",
    "top_k",
    "min_p",
    "repeat_penalty",
)
"""Request fields beyond OpenAI's own; dropped (once, remembered) if a server rejects them."""


def chat_body(
    model: str,
    messages: Sequence[ChatMessage],
    sampling: SamplingConfig,
    *,
    stream: bool,
    max_tokens: int,
    plain: bool,
) -> dict[str, Any]:
    """The JSON of one ``/chat/completions`` request; ``plain``: OpenAI's own fields only."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": GUARD(m.content)} for m in messages],
        "stream": stream,
        **sampling.openai_fields(),
        "max_tokens": max_tokens,
    }
    if plain:
        for name in EXTENSIONS:
            body.pop(name, None)
        return body
    body["cache_prompt"] = True  # llama.cpp: keep the slot's KV cache for the next turn
    body["chat_template_kwargs"] = {"enable_thinking": False}  # Gemma 4, Qwen 3
    if stream:
        body["timings_per_token"] = True  # llama-server: cache counts before token 1
        body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    return body


def rejects_tools(response: httpx.Response) -> bool:
    """Whether this refusal is about the request's ``tools`` (a server or model without
    function calling): the reply is asked again without them."""
    if response.status_code not in (400, 422, 500, 501):
        return False
    said = server_message(response).lower()
    return "tool" in said or "function" in said


def rejects_extensions(response: httpx.Response) -> bool:
    """Whether this refusal names one of the non-OpenAI fields (so a plain request may pass)."""
    if response.status_code not in (400, 422):
        return False
    said = server_message(response)
    return any(name in said for name in EXTENSIONS)
