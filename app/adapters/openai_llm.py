"""The language model on an OpenAI-compatible server (llama-server, vLLM, Ollama, LM Studio,
``llama_cpp.server``), streamed over ``/v1/chat/completions`` with ``stream: true``.

It implements the same ``LanguageModel`` port as the in-process llama.cpp model, so the
pipeline cannot tell them apart:

* one piece per streamed chunk (servers send one token per chunk), through the same
  reply filter (stop strings, Gemma 4 thought blocks) and the same sampling config as
  in-process;
* barge-in closes the HTTP stream before the next piece is yielded, which is how
  llama-server, vLLM and ``llama_cpp.server`` learn to stop generating (they abort a
  request whose client disconnected);
* the prompt is the conversation as it is, append-only, so the server's prompt cache
  (llama-server ``cache_prompt`` and slots, vLLM automatic prefix caching) reuses the
  persona and earlier turns; the cached-token count the server reports (llama-server
  ``timings.cache_n``, OpenAI-style ``usage.prompt_tokens_details.cached_tokens``) goes
  to the timeline through ``on_prompt``, exactly like the in-process reused tokens;
* every failure (nothing listening, timeout, 401/403, 404, 429, 5xx, a stream cut off)
  raises ``LlmServerError`` with one line that names the server but never the API key;
  nothing is left broken, so the next turn simply tries again.

The client only connects out (httpx); nothing here listens on a socket.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx

from app.adapters.openai_catalog import ServerCatalog, ServerInfo
from app.adapters.openai_errors import (
    LlmServerError,
    ServerErrors,
    api_base,
    is_context_overflow,
    redact,
    server_message,
)
from app.adapters.openai_history import DroppedHistory
from app.adapters.openai_request import chat_body, rejects_extensions, rejects_tools
from app.adapters.openai_stream import (
    DONE,
    StreamStats,
    completion_tokens,
    delta_text,
    finished,
    parse_event,
    prompt_stats,
)
from app.adapters.sampling import SamplingConfig
from app.adapters.sse import (
    MAX_ERROR_BYTES,
    TooLong,
    capped_body,
    capped_lines,
    capped_response,
)
from app.adapters.stream_filters import ReplyFilter
from app.core.ports import ChatMessage, PromptStats
from app.tools.gemma4 import call_text
from app.tools.openai_format import ToolCallDeltas, round_messages, tools_field
from app.tools.spec import ToolSpec

log = logging.getLogger(__name__)
END_MARKERS = ("<end_of_turn>", "<turn|>", "<|im_end|>", "<|eot_id|>", "<|end|>")
"""End-of-turn markers a server may leak as text (Gemma 3/4, ChatML, Llama 3, Phi)."""


class OpenAILanguageModel:
    """Streams chat replies from an OpenAI-compatible server, one chunk per piece."""

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        sampling: SamplingConfig | None = None,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 30.0,
        warm_timeout_s: float = 120.0,
    ) -> None:
        self.base_url = api_base(base_url)
        self.server = redact(self.base_url)
        self.model = (model or "").strip() or None
        self.sampling = sampling if sampling is not None else SamplingConfig()
        self._active = self.sampling
        self.context: int | None = None
        """The server's context length for this model, once known."""
        self.read_timeout_s = read_timeout_s
        self.warm_timeout_s = warm_timeout_s
        self.stop_strings = END_MARKERS
        headers = {"Accept": "text/event-stream, application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._errors = ServerErrors(self.server, bool(api_key))
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
            follow_redirects=False,
        )
        self._catalog = ServerCatalog(self._client, self.base_url, self._errors, read_timeout_s)
        self._plain = False  # the server rejected the non-OpenAI fields: send none
        self._tools: tuple[ToolSpec, ...] = ()
        self._tools_refused = False  # the server refused a request with ``tools``
        self._history = DroppedHistory()
        self._lock = threading.Lock()
        self._epoch = 0
        self.last_stream: StreamStats | None = None
        log.info("LLM on server %s, model %s", self.server, self.model or "(server default)")

    def close(self) -> None:
        self._client.close()

    def prompt_budget(self) -> int | None:
        """Prompt tokens that fit the server's context with room for a reply, once known
        (learnt by ``warm``; never asks the network, so it is safe on any thread)."""
        return None if self.context is None else max(self.context - self.sampling.max_tokens, 0)

    def _learn_context(self) -> None:
        try:
            self.context = self._catalog.context_length(self.list_models(), self.model)
        except LlmServerError as exc:
            log.info("context length of %s unknown: %s", self.server, exc)

    def set_temperature(self, temperature: float | None) -> None:
        """The persona's sampling temperature for the next replies (None: the default)."""
        self._active = self.sampling.with_temperature(temperature)

    # ---- requests ------------------------------------------------------------------------

    def _model_name(self) -> str:
        """The configured model, or the server's first one (llama-server serves one)."""
        if self.model is None:
            models = self.list_models()
            if not models:
                raise LlmServerError(f"the language model server {self.server} lists no models")
            self.model = str(models[0].get("id", ""))
        return self.model

    def _open(
        self, messages: Sequence[ChatMessage], stream: bool, max_tokens: int, timeout_s: float,
        rounds: Sequence[dict[str, object]] = (),
    ) -> tuple[httpx.Response, list[ChatMessage]]:
        """Send the request; returns the open response (status 200) and what was sent.
        ``rounds``: this reply's tool calls and results so far (OpenAI messages)."""
        for _attempt in range(8):
            sent = self._history.apply(messages)
            body = chat_body(self._model_name(), sent, self._active, stream=stream,
                             max_tokens=max_tokens, plain=self._plain)
            body["messages"] += list(rounds)
            if self._tools and not self._tools_refused:
                body["tools"] = tools_field(self._tools)
            request = self._client.build_request(
                "POST",
                self.base_url + "/chat/completions",
                json=body,
                timeout=httpx.Timeout(timeout_s, connect=self._client.timeout.connect),
            )
            try:
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise self._errors.transport(exc, timeout_s) from exc
            if response.status_code == 200:
                return response, sent
            try:
                response = capped_response(response, MAX_ERROR_BYTES)
            except httpx.HTTPError as exc:
                raise self._errors.transport(exc, timeout_s) from exc
            except TooLong as exc:
                raise self._errors.fail(f"answered HTTP {response.status_code} with {exc} of "
                                        "error text") from exc
            if not self._plain and rejects_extensions(response):
                log.warning("%s rejects llama.cpp/vLLM fields: sending plain OpenAI", self.server)
                self._plain = True
                continue
            if "tools" in body and rejects_tools(response):
                log.warning("%s refuses tools: its model answers without them", self.server)
                self._tools_refused = True
                continue
            overflow = response.status_code == 400 and is_context_overflow(
                server_message(response)
            )
            if overflow and self._history.drop_more(messages):
                continue
            raise self._errors.status(response, self.model)
        raise self._errors.fail("the request kept being refused")

    # ---- port ---------------------------------------------------------------------------

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        """Have the server evaluate (and cache) the persona prefix with a one-token request.

        The prompt is ``messages`` plus a short user turn, so what the server keeps is the
        prefix every real turn starts with."""
        with self._lock:
            self._epoch += 1
        started = time.perf_counter()
        response, _ = self._open(
            [*messages, ChatMessage("user", "Hello.")], False, 1, self.warm_timeout_s
        )
        try:
            data = capped_body(response.iter_bytes())
        except httpx.HTTPError as exc:
            raise self._errors.transport(exc, self.warm_timeout_s) from exc
        except TooLong as exc:
            raise self._errors.fail(
                f"answered the warm-up with {exc} (not a chat server?)"
            ) from exc
        finally:
            response.close()
        try:
            reply = json.loads(data)
        except ValueError as exc:
            raise self._errors.fail("answered with something that is not JSON") from exc
        found = prompt_stats(reply) if isinstance(reply, dict) else None
        if self.context is None:
            self._learn_context()
        prompt, cached = found if found else (0, None)
        log.info(
            "warmed prompt on the server: %d tokens, %s from its cache (%.0f ms)",
            prompt,
            "?" if cached is None else cached,
            (time.perf_counter() - started) * 1000,
        )
        return PromptStats(prompt_tokens=prompt, reused_tokens=cached or 0)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        """Yield the reply one streamed chunk at a time; close the stream when cancelled.

        ``on_prompt`` gets the server's prompt and cached-token counts before the first
        piece when the server sends them with it (llama-server, vLLM), else when the
        stream ends; not at all from a server that never reports them."""
        return self.stream_after(messages, "", cancelled, on_prompt)

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        """Send ``specs`` as the request's ``tools`` from the next reply on; the calls the
        server streams come out as Gemma 4 call text for the app's one tool loop."""
        self._tools = tuple(specs)
        return True

    def stream_after(
        self,
        messages: Sequence[ChatMessage],
        written: str,
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        """Go on with a reply after its tool rounds (``written``, in Gemma 4's markers),
        sent as OpenAI ``tool_calls`` and ``tool`` messages."""
        with self._lock:
            self._epoch += 1
            epoch = self._epoch
        return self._decode(messages, epoch, cancelled, on_prompt, round_messages(written))

    def _decode(
        self,
        messages: Sequence[ChatMessage],
        epoch: int,
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None,
        rounds: Sequence[dict[str, object]] = (),
    ) -> Iterator[str]:
        if cancelled():
            return
        started = time.perf_counter()
        response, _ = self._open(messages, True, self._active.max_tokens, self.read_timeout_s,
                                 rounds)
        calls = ToolCallDeltas()
        reply = ReplyFilter(self.stop_strings)
        chunks = 0
        ttft: float | None = None
        stats: tuple[int, int | None] | None = None
        completion: int | None = None
        reported = False
        ended = False

        def report() -> None:
            nonlocal reported
            if stats is not None and not reported and on_prompt is not None:
                on_prompt(PromptStats(prompt_tokens=stats[0], reused_tokens=stats[1] or 0))
            reported = reported or stats is not None

        try:
            lines = capped_lines(response.iter_bytes())
            while True:
                if cancelled() or self._epoch != epoch:
                    return
                try:
                    line = next(lines, None)
                except httpx.HTTPError as exc:
                    raise self._errors.transport(exc, self.read_timeout_s) from exc
                except TooLong as exc:  # one endless line would grow without bound
                    raise self._errors.fail(
                        f"sent a stream line of {exc} (not a chat stream?); the reply was stopped"
                    ) from exc
                if line is None:
                    if ended:
                        break
                    raise self._errors.fail(  # the body ended without [DONE] or a finish reason
                        f"the reply was cut off after {chunks} chunks (server stopped?)"
                    )
                event = parse_event(line, self._errors.fail)
                if event is None:
                    continue
                if event == DONE:
                    break
                ended = ended or finished(event)
                calls.feed(event)
                stats = prompt_stats(event) or stats
                completion = completion_tokens(event) or completion
                text = delta_text(event)
                if not text:
                    continue
                chunks += 1
                piece = reply.feed(text)
                if piece:
                    if ttft is None:
                        ttft = time.perf_counter() - started
                    report()
                    yield piece
                if reply.stopped:
                    break
            tail = reply.finish()
            report()
            if tail:
                yield tail
            read = calls.read()
            for bad in read.malformed:
                log.info("a malformed tool call from %s was dropped: %s", self.server, bad)
            for call in read.calls:  # the app's tool loop reads Gemma 4's markers
                yield call_text(call)
        finally:
            response.close()
            self.last_stream = StreamStats(
                ttft_s=ttft,
                chunks=chunks,
                completion_tokens=completion,
                prompt_tokens=stats[0] if stats else None,
                cached_tokens=stats[1] if stats else None,
            )

    # ---- connection test and measurement ---------------------------------------------------

    def list_models(self) -> list[dict[str, Any]]:
        """``/v1/models``: what the server serves (raises LlmServerError)."""
        return self._catalog.models(self.model)

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` by the server's own tokenizer; None if it has none."""
        return self._catalog.count_tokens(text, self.model)

    def probe(self) -> ServerInfo:
        """Connect, find the model and time a short streamed reply (for "Test connection")."""
        models = self.list_models()
        ids = [str(m.get("id")) for m in models]
        if self.model is not None and ids and self.model not in ids:
            log.info("model %r is not in the server's list %s; trying it anyway", self.model, ids)
        name = self._model_name()
        started = time.perf_counter()
        first: float | None = None
        pieces: list[str] = []
        for piece in self.stream([ChatMessage("user", "Say hello in three words.")], lambda: False):
            first = first if first is not None else time.perf_counter() - started
            pieces.append(piece)
        if first is None:
            raise self._errors.fail("answered, but with an empty reply")
        context = self._catalog.context_length(models, self.model)
        return ServerInfo(name, context, first, "".join(pieces).strip())
