"""Text that did not come from the chat template must not open a template role.

The rendered prompt is tokenized with special tokens on (the template's own markers must
become their control tokens), so a card, memory, history line or persona file containing,
say, ``<|im_start|>system`` would open a real system turn. Every message's content is
neutralized first: a zero-width space after the marker's first character keeps it
readable to the model as text but no longer matches the control token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

BREAK = "\u200b"
"""ZERO WIDTH SPACE: invisible, and no vocabulary has a control token containing it."""
KNOWN_MARKERS = (
    "<|im_start|>", "<|im_end|>", "<|endoftext|>",  # ChatML (SmolLM2, Qwen)
    "<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>",  # Gemma 2/3
    "<|turn>", "<turn|>", "<|think|>", "<|channel>", "<channel|>",  # Gemma 4 ...
    "<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>", "<|tool_response>",
    "<tool_response|>", '<|"|>', "<|image>", "<image|>", "<|image|>", "<|audio>",
    "<audio|>", "<|audio|>", "<|video|>", "<pad>", "<unk>", "<mask>",  # ... all its controls
    "<repo_name>", "<reponame>", "<file_sep>", "<filename>", "<gh_stars>",  # SmolLM2's others
    "<issue_start>", "<issue_comment>", "<issue_closed>", "<jupyter_start>", "<jupyter_text>",
    "<jupyter_code>", "<jupyter_output>", "<jupyter_script>", "<empty_output>",
    "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",  # Llama 3
    "<|system|>", "<|user|>", "<|assistant|>", "<|end|>",  # Phi
    "<s>", "</s>", "[INST]", "[/INST]",  # Llama 2, Mistral
)
"""Markers of the templates people run, for servers whose vocabulary we cannot read."""
_CONTROL = 1 << 3  # LLAMA_TOKEN_ATTR_CONTROL
_USER_DEFINED = 1 << 4  # LLAMA_TOKEN_ATTR_USER_DEFINED
_MARKUP = re.compile(r"<[^<>\s]+>|\[[^\[\]\s]+\]")
"""A user-defined token is only neutralized when it looks like a marker, not whitespace."""


class MarkerGuard:
    """Neutralizes a fixed set of marker strings wherever they occur in a text."""

    def __init__(self, markers: Iterable[str]) -> None:
        found = sorted({m for m in markers if len(m) > 1}, key=len, reverse=True)
        self.markers = tuple(found)
        self._pattern = re.compile("|".join(map(re.escape, found))) if found else None

    def __call__(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: m[0][0] + BREAK + m[0][1:], text)


def model_markers(model: Any) -> list[str]:
    """The control tokens (and marker-shaped user-defined tokens) of a llama.cpp model
    (``Llama._model``), whatever its template calls them."""
    markers = []
    for token in range(int(model.n_vocab())):
        attr = int(model.token_get_attr(token))
        if not attr & (_CONTROL | _USER_DEFINED):
            continue
        text = str(model.token_get_text(token))
        if (attr & _CONTROL and text.strip()) or _MARKUP.fullmatch(text):
            markers.append(text)
    return markers
