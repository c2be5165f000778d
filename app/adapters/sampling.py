"""One set of sampling settings for both language model adapters.

llama-cpp-python and an OpenAI-compatible server spell the same settings differently;
each adapter asks this config for its own spelling, so no setting reaches one engine and
misses the other.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

NO_REPEAT_PENALTY = 1.0


@dataclass(frozen=True)
class SamplingConfig:
    """How replies are sampled; a persona may change only the temperature."""

    temperature: float = 0.7
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = NO_REPEAT_PENALTY
    """1.0 penalizes nothing."""
    max_tokens: int = 200
    """The longest reply; the prompt budget keeps room for it."""
    seed: int | None = None
    """None: a different seed each load (or request). Set, the local model draws from a
    stream that depends on the seed and the prompt: the same words get the same reply."""

    def with_temperature(self, temperature: float | None) -> SamplingConfig:
        """This config at a persona's temperature (None: this config's own)."""
        return self if temperature is None else replace(self, temperature=temperature)

    def llama_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of llama-cpp-python's ``Llama.generate``.

        ``max_tokens`` is the adapter's decode loop's bound and ``seed`` an argument of
        ``Llama`` itself (``llama_load_kwargs``): ``generate`` takes neither."""
        return {
            "temp": self.temperature,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "min_p": self.min_p,
            "repeat_penalty": self.repeat_penalty,
        }

    def llama_load_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``Llama(...)`` that sampling sets."""
        return {} if self.seed is None else {"seed": self.seed}

    def openai_fields(self) -> dict[str, Any]:
        """Fields of a ``/v1/chat/completions`` request.

        ``top_k``, ``min_p`` and ``repeat_penalty`` are llama.cpp and vLLM extensions (a
        plain OpenAI server may refuse them); the penalty is sent only when it penalizes,
        so a server that does not know it is not asked to."""
        fields: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "min_p": self.min_p,
        }
        if self.repeat_penalty != NO_REPEAT_PENALTY:
            fields["repeat_penalty"] = self.repeat_penalty
        if self.seed is not None:
            fields["seed"] = self.seed
        return fields
