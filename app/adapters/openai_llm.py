"""The language model on an OpenAI-compatible server (llama-server, vLLM, Ollama, LM Studio,
``llama_cpp.server``), streamed over ``/v1/chat/completions`` with ``stream: true``.

It implements the same ``LanguageModel`` port as the in-process llama.cpp model, so the
pipeline cannot tell them apart:

* one piece per streamed chunk (servers send one token per chunk), with the same stop
  filter and Gemma 4 thought filter as in-process (imported from ``llama_llm``);
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
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from app.adapters.errors import EngineLoadError, first_line
from app.adapters.llama_llm import _StopFilter, _ThoughtFilter
from app.adapters.sse import MAX_ERROR_BYTES, TooLong, capped_body, capped_lines, capped_response
from app.adapters.template_guard import KNOWN_MARKERS, MarkerGuard
from app.core.ports import ChatMessage, PromptStats

log = logging.getLogger(__name__)
_GUARD = MarkerGuard(KNOWN_MARKERS)
"""A server renders its own template and may parse markers in content (llama-server does),
and we cannot read its vocabulary: the markers of the common templates are neutralized."""

END_MARKERS = ("<end_of_turn>", "<turn|>", "<|im_end|>", "<|eot_id|>", "<|end|>")
"""End-of-turn markers a server may leak as text (Gemma 3/4, ChatML, Llama 3, Phi)."""

EXTENSIONS = (
    "cache_prompt",
    "chat_template_kwargs",
    "timings_per_token",
    "stream_options",
    "top_k",
    "min_p",
)
"""Request fields beyond OpenAI's own; dropped (once, remembered) if a server rejects them."""


class LlmServerError(EngineLoadError):
    """The language model server failed; ``str(error)`` is one line fit for the window."""


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


@dataclass(frozen=True)
class ServerInfo:
    """What "Test connection" shows."""

    model: str
    context_length: int | None
    ttft_s: float
    reply: str


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


def _server_message(response: httpx.Response) -> str:
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


def _completion_tokens(chunk: dict[str, Any]) -> int | None:
    usage = chunk.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
        return int(usage["completion_tokens"])
    timings = chunk.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("predicted_n"), int):
        return int(timings["predicted_n"])
    return None


def _is_context_overflow(message: str) -> bool:
    text = message.lower()
    return "context" in text and any(
        w in text for w in ("exceed", "too long", "maximum", "length", "overflow")
    )


class OpenAILanguageModel:
    """Streams chat replies from an OpenAI-compatible server, one chunk per piece."""

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.7,
        max_tokens: int = 200,
        seed: int | None = None,
        top_k: int = 40,
        top_p: float = 0.95,
        min_p: float = 0.05,
        connect_timeout_s: float = 5.0,
        read_timeout_s: float = 30.0,
        warm_timeout_s: float = 120.0,
    ) -> None:
        self.base_url = api_base(base_url)
        self.server = redact(self.base_url)
        self.model = (model or "").strip() or None
        self.max_tokens = max_tokens
        self._temperature = temperature
        self.context: int | None = None
        """The server's context length for this model, once known."""
        self.read_timeout_s = read_timeout_s
        self.warm_timeout_s = warm_timeout_s
        self.stop_strings = END_MARKERS
        headers = {"Accept": "text/event-stream, application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._has_key = bool(api_key)
        self._client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(read_timeout_s, connect=connect_timeout_s),
            follow_redirects=False,
        )
        self._sampling: dict[str, Any] = {
            "temperature": temperature,
            "top_p": top_p,
            "top_k": top_k,
            "min_p": min_p,
        }
        if seed is not None:
            self._sampling["seed"] = seed
        self._plain = False  # the server rejected the non-OpenAI fields: send none
        self._dropped: tuple[ChatMessage, ...] = ()
        self._lock = threading.Lock()
        self._epoch = 0
        self.last_stream: StreamStats | None = None
        log.info("LLM on server %s, model %s", self.server, self.model or "(server default)")

    def close(self) -> None:
        self._client.close()

    def prompt_budget(self) -> int | None:
        """Prompt tokens that fit the server's context with room for a reply, once known
        (learnt by ``warm``; never asks the network, so it is safe on any thread)."""
        return None if self.context is None else max(self.context - self.max_tokens, 0)

    def _learn_context(self) -> None:
        try:
            self.context = self.context_length(self.list_models())
        except LlmServerError as exc:
            log.info("context length of %s unknown: %s", self.server, exc)

    def set_temperature(self, temperature: float | None) -> None:
        """The persona's sampling temperature for the next replies (None: the default)."""
        self._sampling["temperature"] = self._temperature if temperature is None else temperature

    # ---- requests ------------------------------------------------------------------------

    def _model_name(self) -> str:
        """The configured model, or the server's first one (llama-server serves one)."""
        if self.model is None:
            models = self.list_models()
            if not models:
                raise LlmServerError(f"the language model server {self.server} lists no models")
            self.model = str(models[0].get("id", ""))
        return self.model

    def _body(
        self, messages: Sequence[ChatMessage], stream: bool, max_tokens: int
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._model_name(),
            "messages": [{"role": m.role, "content": _GUARD(m.content)} for m in messages],
            "stream": stream,
            "max_tokens": max_tokens,
            **self._sampling,
        }
        if not self._plain:
            body["cache_prompt"] = True  # llama.cpp: keep the slot's KV cache for the next turn
            body["chat_template_kwargs"] = {"enable_thinking": False}  # Gemma 4, Qwen 3
            if stream:
                body["timings_per_token"] = True  # llama-server: cache counts before token 1
                body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
        else:
            for name in EXTENSIONS:
                body.pop(name, None)
        return body

    def _fail(self, what: str) -> LlmServerError:
        return LlmServerError(f"language model server {self.server}: {what}")

    def _transport_error(self, exc: httpx.HTTPError, timeout_s: float) -> LlmServerError:
        if isinstance(exc, httpx.ConnectTimeout):
            return self._fail("no answer to connect (is it on and reachable?)")
        if isinstance(exc, httpx.ConnectError):
            return self._fail(f"cannot connect ({first_line(exc)}); is the server running?")
        if isinstance(exc, httpx.TimeoutException):
            return self._fail(f"sent nothing for {timeout_s:.0f} s (timed out)")
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return self._fail(f"the connection was cut ({first_line(exc)})")
        return self._fail(first_line(exc))

    def _status_error(self, response: httpx.Response) -> LlmServerError:
        code = response.status_code
        said = _server_message(response)
        if code in (401, 403):
            key = "the API key was refused" if self._has_key else "it needs an API key"
            return self._fail(f"{key} (HTTP {code}: {said})")
        if code == 404:
            return self._fail(f"no model {self.model!r} or no chat API here (HTTP 404: {said})")
        if code == 429:
            return self._fail(f"too many requests, try again shortly (HTTP 429: {said})")
        if code >= 500:
            return self._fail(f"server error (HTTP {code}: {said})")
        return self._fail(f"request refused (HTTP {code}: {said})")

    def _rejects_extensions(self, response: httpx.Response) -> bool:
        if self._plain or response.status_code not in (400, 422):
            return False
        said = _server_message(response)
        return any(name in said for name in EXTENSIONS)

    def _messages(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """``messages`` less the oldest exchanges dropped after a context overflow.

        The same ones stay dropped on later turns, so the prompt stays append-only (and
        cached) after the cut instead of overflowing again every turn."""
        msgs = list(messages)
        first = 1 if msgs and msgs[0].role == "system" else 0
        n = len(self._dropped)
        if n and tuple(msgs[first : first + n]) == self._dropped and len(msgs) - first > n:
            return msgs[:first] + msgs[first + n :]
        self._dropped = ()
        return msgs

    def _drop_oldest(self, messages: Sequence[ChatMessage]) -> bool:
        msgs = list(messages)
        first = 1 if msgs and msgs[0].role == "system" else 0
        start = first + len(self._dropped)
        rest = len(msgs) - start - 1  # the last (user) message always stays
        if rest < 1:
            return False
        cut = max(2, rest // 2 // 2 * 2)  # whole exchanges: roles keep alternating
        while start + cut < len(msgs) - 1 and msgs[start + cut].role != "user":
            cut += 1
        cut = min(cut, rest)
        self._dropped = (*self._dropped, *msgs[start : start + cut])
        log.warning("prompt too long for the server: dropping the %d oldest messages", cut)
        return True

    def _open(
        self, messages: Sequence[ChatMessage], stream: bool, max_tokens: int, timeout_s: float
    ) -> tuple[httpx.Response, list[ChatMessage]]:
        """Send the request; returns the open response (status 200) and what was sent."""
        for _attempt in range(8):
            sent = self._messages(messages)
            body = self._body(sent, stream, max_tokens)
            request = self._client.build_request(
                "POST",
                self.base_url + "/chat/completions",
                json=body,
                timeout=httpx.Timeout(timeout_s, connect=self._client.timeout.connect),
            )
            try:
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise self._transport_error(exc, timeout_s) from exc
            if response.status_code == 200:
                return response, sent
            try:
                response = capped_response(response, MAX_ERROR_BYTES)
            except httpx.HTTPError as exc:
                raise self._transport_error(exc, timeout_s) from exc
            except TooLong as exc:
                raise self._fail(f"answered HTTP {response.status_code} with {exc} of "
                                 "error text") from exc
            if self._rejects_extensions(response):
                log.warning("%s rejects llama.cpp/vLLM fields: sending plain OpenAI", self.server)
                self._plain = True
                continue
            overflow = response.status_code == 400 and _is_context_overflow(
                _server_message(response)
            )
            if overflow and self._drop_oldest(messages):
                continue
            raise self._status_error(response)
        raise self._fail("the request kept being refused")

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
            raise self._transport_error(exc, self.warm_timeout_s) from exc
        except TooLong as exc:
            raise self._fail(f"answered the warm-up with {exc} (not a chat server?)") from exc
        finally:
            response.close()
        try:
            reply = json.loads(data)
        except ValueError as exc:
            raise self._fail("answered with something that is not JSON") from exc
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
        with self._lock:
            self._epoch += 1
            epoch = self._epoch
        return self._decode(messages, epoch, cancelled, on_prompt)

    def _decode(
        self,
        messages: Sequence[ChatMessage],
        epoch: int,
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None,
    ) -> Iterator[str]:
        if cancelled():
            return
        started = time.perf_counter()
        response, _ = self._open(messages, True, self.max_tokens, self.read_timeout_s)
        stop = _StopFilter(self.stop_strings)
        thought = _ThoughtFilter()
        began = False
        chunks = 0
        ttft: float | None = None
        stats: tuple[int, int | None] | None = None
        completion: int | None = None
        reported = False
        finished = False

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
                    raise self._transport_error(exc, self.read_timeout_s) from exc
                except TooLong as exc:  # one endless line would grow without bound
                    raise self._fail(f"sent a stream line of {exc} (not a chat stream?); "
                                     "the reply was stopped") from exc
                if line is None:
                    if finished:
                        break
                    raise self._fail(  # the body ended without [DONE] or a finish reason
                        f"the reply was cut off after {chunks} chunks (server stopped?)"
                    )
                event = self._event(line)
                if event is None:
                    continue
                if isinstance(event, str):  # [DONE]
                    break
                finished = finished or self._finished(event)
                stats = prompt_stats(event) or stats
                completion = _completion_tokens(event) or completion
                text = self._delta_text(event)
                if not text:
                    continue
                chunks += 1
                piece = thought.feed(stop.feed(text))
                if not began:
                    piece = piece.lstrip()
                    began = bool(piece)
                if piece:
                    if ttft is None:
                        ttft = time.perf_counter() - started
                    report()
                    yield piece
                if stop.stopped:
                    break
            tail = "" if stop.stopped else stop.flush()
            tail = thought.feed(tail) + thought.flush()
            if not began:
                tail = tail.lstrip()
            report()
            if tail:
                yield tail
        finally:
            response.close()
            self.last_stream = StreamStats(
                ttft_s=ttft,
                chunks=chunks,
                completion_tokens=completion,
                prompt_tokens=stats[0] if stats else None,
                cached_tokens=stats[1] if stats else None,
            )

    def _event(self, line: str) -> dict[str, Any] | str | None:
        """One SSE line as a JSON object, ``"done"`` for ``[DONE]``, or None (comments,
        keep-alives); an error the server streams raises."""
        if line.startswith("error:"):
            raise self._fail(f"error mid-reply: {line[6:].strip()[:200]}")
        if not line.startswith("data:"):
            return None
        data = line[5:].strip()
        if data == "[DONE]":
            return "done"
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise self._fail("sent a stream chunk that is not JSON") from exc
        if not isinstance(event, dict):
            return None
        error = event.get("error")
        if error:
            said = error.get("message", error) if isinstance(error, dict) else error
            raise self._fail(f"error mid-reply: {str(said)[:200]}")
        return event

    @staticmethod
    def _finished(event: dict[str, Any]) -> bool:
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return False
        return choices[0].get("finish_reason") is not None

    @staticmethod
    def _delta_text(event: dict[str, Any]) -> str:
        choices = event.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        delta = choices[0].get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        return content if isinstance(content, str) else ""

    # ---- connection test and measurement ---------------------------------------------------

    def list_models(self) -> list[dict[str, Any]]:
        """``/v1/models``: what the server serves (raises LlmServerError)."""
        try:
            request = self._client.build_request("GET", self.base_url + "/models")
            response = capped_response(self._client.send(request, stream=True))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, self.read_timeout_s) from exc
        except TooLong as exc:
            raise self._fail(f"answered /models with {exc} (not a model list)") from exc
        if response.status_code != 200:
            raise self._status_error(response)
        try:
            data = response.json().get("data", [])
        except (ValueError, AttributeError) as exc:
            raise self._fail("/models did not answer with a model list") from exc
        return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

    def context_length(self, models: list[dict[str, Any]]) -> int | None:
        """The context the server gives the model, where it says (vLLM, llama-server,
        LM Studio, ``llama_cpp.server`` each put it somewhere else, or nowhere)."""
        chosen = [m for m in models if m.get("id") == self.model] or models[:1]
        for m in chosen:
            meta = m.get("meta") if isinstance(m.get("meta"), dict) else {}
            for value in (
                m.get("max_model_len"),
                m.get("context_length"),
                m.get("max_context_length"),
                meta.get("n_ctx") if meta else None,
            ):
                if isinstance(value, int) and value > 0:
                    return value
        root = self.base_url.rsplit("/v1", 1)[0]
        try:
            props = self._client.get(root + "/props", timeout=3.0)
            settings = props.json().get("default_generation_settings", {})
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            if props.status_code == 200 and isinstance(n_ctx, int):
                return n_ctx
        except (httpx.HTTPError, ValueError, AttributeError):
            pass
        for m in chosen:
            meta = m.get("meta") if isinstance(m.get("meta"), dict) else {}
            train = meta.get("n_ctx_train") if meta else None
            if isinstance(train, int) and train > 0:
                return train
        return None

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
            raise self._fail("answered, but with an empty reply")
        return ServerInfo(name, self.context_length(models), first, "".join(pieces).strip())

    def count_tokens(self, text: str) -> int | None:
        """Tokens of ``text`` by the server's own tokenizer (llama-server and vLLM
        ``/tokenize``, ``llama_cpp.server`` ``/extras/tokenize``); None if it has none."""
        root = self.base_url.rsplit("/v1", 1)[0]
        body = {
            "content": text,
            "prompt": text,
            "input": text,
            "model": self.model,
            "add_special": False,
        }
        for path in ("/tokenize", "/extras/tokenize"):
            try:
                response = self._client.post(root + path, json=body, timeout=5.0)
                data = response.json()
            except (httpx.HTTPError, ValueError):
                continue
            if response.status_code == 200 and isinstance(data, dict):
                if isinstance(data.get("count"), int):
                    return int(data["count"])
                if isinstance(data.get("tokens"), list):
                    return len(data["tokens"])
        return None
