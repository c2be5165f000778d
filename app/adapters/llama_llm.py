"""The language model: one long-lived llama.cpp model (llama-cpp-python) streaming token by token.

Why the prompt is rendered and tokenized here rather than by ``create_chat_completion``:
the pipeline needs to know, before the first token, how much of the prompt llama.cpp
can reuse from its KV cache (the persona prefix and earlier turns), and it needs to
stop within one token of a barge-in. Both need the exact prompt tokens and a
token-level decode loop.

Prefix reuse works because the conversation is append-only: the prompt of turn N is a
prefix of the prompt of turn N+1 (up to the reply's own tokens), and the KV cache still
holds turn N. ``warm`` evaluates the persona prefix ahead of the first turn.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from app.adapters.errors import EngineLoadError, first_line
from app.adapters.llama_load import (
    auto_gpu_layers,
    check_gguf,
    default_threads,
    embedded_model_path,
)
from app.adapters.prefix_states import MIN_TOKENS, PrefixStates
from app.adapters.sampling import SamplingConfig
from app.adapters.stream_filters import ReplyFilter
from app.adapters.template_guard import MarkerGuard, model_markers
from app.core.ports import ChatMessage, PromptStats
from app.tools.openai_format import tools_field
from app.tools.spec import ToolSpec

log = logging.getLogger(__name__)

_GEMMA_ARCHES = frozenset({"gemma3", "gemma4"})
_GEMMA_STOPS = ("<end_of_turn>", "<turn|>")
_CALL_MARKERS = frozenset({"<|tool_call>", "<tool_call|>", '<|"|>', "<|tool_response>"})
"""Gemma 4's control tokens that a reply with tool calls carries as text (the call parser
takes them out; nothing of a call is spoken)."""


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Number of leading tokens ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptTooLongError(EngineLoadError):
    """The system prompt alone does not fit the model's context (with room for a reply).

    Raised before anything is decoded: llama.cpp itself would only say
    "llama_decode returned 1". ``whose`` names the prompt (the caller knows the persona).
    """

    def __init__(self, tokens: int, limit: int, whose: str = "the persona's") -> None:
        self.tokens = tokens
        self.limit = limit
        super().__init__(
            f"{whose} prompt is {tokens:,} tokens; the model's context holds {limit:,}"
            " with room for a reply: shorten the persona's system prompt"
        )


class LlamaLanguageModel:
    """Streams chat replies from a GGUF model, reusing the KV cache across turns."""

    def __init__(
        self,
        model_path: Path | None = None,
        n_gpu_layers: int | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        sampling: SamplingConfig | None = None,
        prompt_lookup_tokens: int = 0,
    ) -> None:
        """``sampling``: the app's defaults when None; a persona may change its
        temperature (``set_temperature``).

        ``prompt_lookup_tokens``: draft that many tokens by prompt lookup (llama-cpp-
        python's ``LlamaPromptLookupDecoding``); 0, the default, drafts none: on the embedded
        model it decoded slower (``hanasu bench decode``), since a reply seldom repeats its
        prompt and drafting needs the logits of every position."""
        path = Path(model_path) if model_path is not None else embedded_model_path()
        check_gguf(path)
        import llama_cpp

        self._llama_cpp: Any = llama_cpp
        self.sampling = sampling if sampling is not None else SamplingConfig()
        self._active = self.sampling
        layers = auto_gpu_layers(llama_cpp, path) if n_gpu_layers is None else n_gpu_layers
        kwargs: dict[str, Any] = {
            "n_gpu_layers": layers,
            "n_ctx": n_ctx,
            "n_threads": n_threads if n_threads is not None else default_threads(),
            "verbose": False,
            # Keep the full-size sliding-window cache (Gemma): prefix reuse depends on it.
            "swa_full": True,
            **self.sampling.llama_load_kwargs(),
        }
        if prompt_lookup_tokens > 0:
            from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

            kwargs["draft_model"] = LlamaPromptLookupDecoding(num_pred_tokens=prompt_lookup_tokens)
        from app.adapters.llama_amx import extra_buffers_allowed, without_extra_buffers
        from app.paths import user_data_dir

        self.extra_buffers = extra_buffers_allowed(
            llama_cpp, path, layers, user_data_dir() / "llama-amx-verdicts.json"
        )
        loading = contextlib.nullcontext() if self.extra_buffers else without_extra_buffers(
            llama_cpp
        )
        started = time.perf_counter()
        try:
            with loading:
                self._llm: Any = llama_cpp.Llama(os.fspath(path), **kwargs)
        except Exception as exc:
            raise EngineLoadError(
                f"language model {path} could not be loaded: {first_line(exc)}"
            ) from exc
        self.load_seconds = time.perf_counter() - started
        self.model_path = path
        self.n_gpu_layers = layers
        self.architecture = str(self._llm.metadata.get("general.architecture", ""))
        template = self._llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise EngineLoadError(
                f"language model {path.name} has no chat template (a base model, not a chat model?)"
            )
        model = self._llm._model
        eos_id = int(self._llm.token_eos())
        bos_id = int(self._llm.token_bos())
        self._eos_text = model.token_get_text(eos_id) if eos_id >= 0 else ""
        self._bos_text = model.token_get_text(bos_id) if bos_id >= 0 else ""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._formatter: Any = Jinja2ChatFormatter(
            template=template, eos_token=self._eos_text, bos_token=self._bos_text
        )
        self._guard = MarkerGuard([*model_markers(model), self._eos_text, self._bos_text])
        stops = [self._eos_text]
        if self.architecture in _GEMMA_ARCHES:
            stops.extend(_GEMMA_STOPS)
        self.stop_strings: tuple[str, ...] = tuple(s for s in stops if s)
        self._vocab = model.vocab
        self._tools: list[dict[str, object]] = []
        """Declared in the system turn by the model's own template (``offer_tools``)."""
        self._lock = threading.Lock()
        self._prefixes = PrefixStates()
        """Persona prefixes evaluated before, restored on a switch back."""
        self._epoch = 0
        log.info(
            "LLM %s (%s) loaded in %.2f s, %s GPU layers, context %d",
            path.name,
            self.architecture or "unknown arch",
            self.load_seconds,
            layers,
            n_ctx,
        )

    # ---- prompt -------------------------------------------------------------------------

    def render(self, messages: Sequence[ChatMessage], add_generation_prompt: bool = True) -> str:
        """The prompt text exactly as the model's own chat template writes it, each
        message's content with the model's control tokens neutralized (template_guard)."""
        self._formatter.add_generation_prompt = add_generation_prompt
        chat = [{"role": m.role, "content": self._guard(m.content)} for m in messages]
        result = self._formatter(messages=chat, tools=self._tools or None)
        return str(result.prompt)

    def tokenize_prompt(self, text: str) -> list[int]:
        """Prompt tokens; BOS is added only when the template did not write it already."""
        add_bos = not (self._bos_text and text.startswith(self._bos_text))
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True))

    def tokenize(self, text: str) -> list[int]:
        """Tokens of plain text (no BOS, no special tokens): for counting and tests."""
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _prompt_tokens(self, messages: Sequence[ChatMessage]) -> list[int]:
        """Tokens of the full prompt, dropping the oldest exchanges if it would overflow."""
        msgs = list(messages)
        budget = self.prompt_budget()
        while True:
            tokens = self.tokenize_prompt(self.render(msgs))
            if len(tokens) <= budget:
                return tokens
            first = 1 if msgs and msgs[0].role == "system" else 0
            if len(msgs) - first <= 1:
                raise PromptTooLongError(len(tokens), budget, "the")
            log.warning("prompt of %d tokens too long: dropping the oldest message", len(tokens))
            del msgs[first]

    def set_temperature(self, temperature: float | None) -> None:
        """The persona's sampling temperature for the next replies (None: the default)."""
        self._active = self.sampling.with_temperature(temperature)

    def prompt_budget(self) -> int:
        """Prompt tokens that fit the context while leaving room for a whole reply."""
        return int(self._llm.n_ctx()) - self.sampling.max_tokens

    def _check_fits(self, tokens: int) -> None:
        if tokens > self.prompt_budget():
            raise PromptTooLongError(tokens, self.prompt_budget())

    def _cached_tokens(self) -> list[int]:
        return [int(t) for t in self._llm.input_ids[: self._llm.n_tokens]]

    def _truncate_cache(self, tokens: Sequence[int], keep_last: bool) -> int:
        """Keep the KV cache's common prefix with ``tokens``; returns how many are reused.

        With ``keep_last`` false at least one prompt token is left to evaluate, because
        sampling needs fresh logits from the prompt's last position.
        """
        common = common_prefix_length(self._cached_tokens(), tokens)
        if not keep_last and common >= len(tokens):
            common = len(tokens) - 1
        if common <= 0:
            self._llm.reset()
            return 0
        if common < int(self._llm.n_tokens):
            if not self._llm._ctx.kv_cache_seq_rm(-1, common, -1):
                # Some memory types cannot drop a suffix: start over.
                self._llm.reset()
                return 0
            self._llm.n_tokens = common
        return common

    # ---- port ---------------------------------------------------------------------------

    def warm(self, messages: Sequence[ChatMessage]) -> PromptStats:
        """Evaluate the stable prefix of ``messages`` (the persona) into the KV cache.

        The prefix is what the prompt of ``messages`` plus *any* next user turn shares,
        found by rendering two different user turns; that works whatever the template
        does with a lone system message.
        """
        a = self.tokenize_prompt(self.render([*messages, ChatMessage("user", "a")]))
        self._check_fits(len(a))
        b = self.tokenize_prompt(self.render([*messages, ChatMessage("user", "b")]))
        prefix = a[: common_prefix_length(a, b)]
        with self._lock:
            self._epoch += 1  # a reply still streaming from an older call stops here
            started = time.perf_counter()
            reused = self._truncate_cache(prefix, keep_last=True)
            if reused < len(prefix) - MIN_TOKENS:  # a persona's prefix seen before?
                reused = self._prefixes.restore(self._llm, prefix, held=reused)
            if reused < len(prefix):
                self._llm.eval(prefix[reused:])
                if len(prefix) - reused >= MIN_TOKENS:
                    self._prefixes.save(self._llm, prefix)
            elapsed = time.perf_counter() - started
        log.info(
            "warmed prompt prefix: %d tokens, %d reused from cache (%.0f ms)",
            len(prefix),
            reused,
            elapsed * 1000,
        )
        return PromptStats(prompt_tokens=len(prefix), reused_tokens=reused)

    def offer_tools(self, specs: Sequence[ToolSpec]) -> bool:
        """Gemma 4 calls tools in its own format: its template declares them in the system
        turn from the next prompt on. Other models get none (the rules answer)."""
        if self.architecture != "gemma4":
            self._tools = []
            return False
        self._tools = tools_field(specs)  # the OpenAI shape chat templates read
        return bool(self._tools)

    def stream_after(
        self,
        messages: Sequence[ChatMessage],
        written: str,
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
    ) -> Iterator[str]:
        """The same model turn, going on after ``written`` (its call and the app's
        response, in its own format: control tokens in it are the model's own)."""
        return self.stream(messages, cancelled, on_prompt, written)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        cancelled: Callable[[], bool],
        on_prompt: Callable[[PromptStats], None] | None = None,
        written: str = "",
    ) -> Iterator[str]:
        """Yield the reply one token's text at a time; stop at once when cancelled.

        Empty pieces (control tokens) are not yielded; text that could begin a stop
        string is held back until it is clear, and a multi-byte character split across
        tokens comes out whole, so such pieces may rarely span two tokens.
        """
        tokens = self._prompt_tokens(messages)
        if written:
            tokens += list(self._llm.tokenize(written.encode("utf-8"), add_bos=False,
                                              special=True))
        with self._lock:
            self._epoch += 1
            epoch = self._epoch
            reused = self._truncate_cache(tokens, keep_last=False)
            if self._active.seed is not None:  # llama.cpp re-seeds each generate: one
                # stream per prompt, not the same draws every turn (which made replies loop)
                self._llm.set_seed(zlib.crc32(repr(tokens).encode(), self._active.seed))
        stats = PromptStats(prompt_tokens=len(tokens), reused_tokens=reused)
        log.info("prompt %d tokens, %d reused from cache", stats.prompt_tokens, reused)
        if on_prompt is not None:
            on_prompt(stats)
        return self._decode(tokens[reused:], epoch, cancelled)

    def _decode(
        self, new_tokens: list[int], epoch: int, cancelled: Callable[[], bool]
    ) -> Iterator[str]:
        llama_cpp = self._llama_cpp
        gen: Any = None
        utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        reply = ReplyFilter(self.stop_strings)
        sampling = self._active
        try:
            for _ in range(sampling.max_tokens):
                if cancelled():
                    return
                with self._lock:
                    if self._epoch != epoch:  # a newer stream()/warm() took over the cache
                        return
                    if gen is None:
                        gen = self._llm.generate(
                            new_tokens, reset=False, **sampling.llama_kwargs()
                        )
                    token = next(gen, None)
                if token is None or llama_cpp.llama_vocab_is_eog(self._vocab, token):
                    break
                model = self._llm._model
                as_text = model.detokenize([token], special=True).decode("utf-8", errors="ignore")
                if as_text in self.stop_strings or (
                        self._tools and as_text == "<|tool_response>"):  # waits for results
                    break
                shown = as_text.encode() if self._tools and as_text in _CALL_MARKERS else (
                    model.detokenize([token], special=False))
                piece = reply.feed(utf8.decode(shown))
                if piece:
                    yield piece
                if reply.stopped:
                    break
            tail = reply.finish(utf8.decode(b"", final=True))
            if tail:
                yield tail
        finally:
            if gen is not None:
                gen.close()

