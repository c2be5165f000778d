"""What an OpenAI-compatible server says about itself: the models it serves, the context it
gives them, and token counts by its own tokenizer; and what "Test connection" shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from app.adapters.openai_errors import ServerErrors
from app.adapters.sse import TooLong, capped_response


@dataclass(frozen=True)
class ServerInfo:
    """What "Test connection" shows."""

    model: str
    context_length: int | None
    ttft_s: float
    reply: str


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


def _meta(model: dict[str, Any]) -> dict[str, Any]:
    meta = model.get("meta")
    return meta if isinstance(meta, dict) else {}


class ServerCatalog:
    """Reads a server's model list, context length and tokenizer over ``client``."""

    def __init__(
        self, client: httpx.Client, base_url: str, errors: ServerErrors, timeout_s: float
    ) -> None:
        self._client = client
        self._base_url = base_url
        self._root = base_url.rsplit("/v1", 1)[0]
        self._errors = errors
        self._timeout_s = timeout_s

    def models(self, model: str | None) -> list[dict[str, Any]]:
        """``/v1/models``: what the server serves (raises LlmServerError); ``model`` is
        the one asked for, named in a 404."""
        try:
            request = self._client.build_request("GET", self._base_url + "/models")
            response = capped_response(self._client.send(request, stream=True))
        except httpx.HTTPError as exc:
            raise self._errors.transport(exc, self._timeout_s) from exc
        except TooLong as exc:
            raise self._errors.fail(f"answered /models with {exc} (not a model list)") from exc
        if response.status_code != 200:
            raise self._errors.status(response, model)
        try:
            data = response.json().get("data", [])
        except (ValueError, AttributeError) as exc:
            raise self._errors.fail("/models did not answer with a model list") from exc
        return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []

    def context_length(self, models: list[dict[str, Any]], model: str | None) -> int | None:
        """The context the server gives ``model``, where it says (vLLM, llama-server,
        LM Studio, ``llama_cpp.server`` each put it somewhere else, or nowhere)."""
        chosen = [m for m in models if m.get("id") == model] or models[:1]
        for m in chosen:
            for value in (
                m.get("max_model_len"),
                m.get("context_length"),
                m.get("max_context_length"),
                _meta(m).get("n_ctx"),
            ):
                found = _positive(value)
                if found is not None:
                    return found
        try:
            props = self._client.get(self._root + "/props", timeout=3.0)
            settings = props.json().get("default_generation_settings", {})
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            if props.status_code == 200 and isinstance(n_ctx, int):
                return n_ctx
        except (httpx.HTTPError, ValueError, AttributeError):
            pass
        for m in chosen:
            train = _positive(_meta(m).get("n_ctx_train"))
            if train is not None:
                return train
        return None

    def count_tokens(self, text: str, model: str | None) -> int | None:
        """Tokens of ``text`` by the server's own tokenizer (llama-server and vLLM
        ``/tokenize``, ``llama_cpp.server`` ``/extras/tokenize``); None if it has none."""
        body = {
            "content": text,
            "prompt": text,
            "input": text,
            "model": model,
            "add_special": False,
        }
        for path in ("/tokenize", "/extras/tokenize"):
            try:
                response = self._client.post(self._root + path, json=body, timeout=5.0)
                data = response.json()
            except (httpx.HTTPError, ValueError):
                continue
            if response.status_code == 200 and isinstance(data, dict):
                if isinstance(data.get("count"), int):
                    return int(data["count"])
                if isinstance(data.get("tokens"), list):
                    return len(data["tokens"])
        return None
