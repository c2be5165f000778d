"""``--llm-url``, ``--llm-model`` and ``--llm-api-key-env``: the language model on an
OpenAI-compatible server, for ``hanasu run`` and ``hanasu bench`` alike.

The API key is named by an environment variable rather than given on the command line,
where every user of the machine could read it in the process list.
"""

from __future__ import annotations

import argparse
import os

from app.adapters.errors import EngineLoadError


def add_llm_server_arguments(parser: argparse._ActionsContainer) -> None:
    parser.add_argument(
        "--llm-url",
        metavar="URL",
        help="use the LLM on an OpenAI-compatible server (llama-server, vLLM, Ollama, "
        "LM Studio), e.g. http://gpu-box:8080/v1, instead of a local model file",
    )
    parser.add_argument(
        "--llm-model", metavar="NAME", help="model name on the server (default: its first)"
    )
    parser.add_argument(
        "--llm-api-key-env",
        metavar="VAR",
        help="environment variable that holds the server's API key",
    )


def api_key_from_env(args: argparse.Namespace) -> str | None:
    """The API key from the variable ``--llm-api-key-env`` names; also refuses a local
    model file and a server together (one line each)."""
    if getattr(args, "llm_url", None) and getattr(args, "llm", None) is not None:
        raise EngineLoadError("give either --llm (a local model file) or --llm-url, not both")
    name = getattr(args, "llm_api_key_env", None)
    if not name:
        return None
    key = os.environ.get(name, "")
    if not key:
        raise EngineLoadError(f"--llm-api-key-env: the environment variable {name} is not set")
    return key

