"""Lines of a server-sent-event stream, each capped in size.

httpx's ``iter_lines`` keeps a line in memory until its end arrives, however long: a server
that streams one endless line (a wrong endpoint, a broken proxy, a hostile host) grows the
app's memory without bound. These readers stop at a limit no chat stream comes near.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import httpx

MAX_LINE_BYTES = 1024 * 1024
"""One SSE line carries one small JSON chunk (a few hundred bytes); 1 MiB is not a chat."""
MAX_BODY_BYTES = 16 * 1024 * 1024
"""A whole non-streamed reply (the one-token warm-up, the model list)."""
MAX_ERROR_BYTES = 1024 * 1024
"""An error's body: one message, a page of HTML at most."""


class TooLong(ValueError):
    """A line or body passed its limit; ``limit`` is that limit in bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit // 1024} KiB")
        self.limit = limit


def capped_lines(chunks: Iterable[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines (without ``\\n`` or ``\\r\\n``) of a byte stream, as UTF-8 text; raises
    TooLong as soon as a line passes ``limit`` bytes, before reading any more of it."""
    pending = bytearray()
    for chunk in chunks:
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) != -1:
            if end - start > limit:
                raise TooLong(limit)
            yield _text(pending[start:end])
            start = end + 1
        del pending[:start]
        if len(pending) > limit:
            raise TooLong(limit)
    if pending:
        yield _text(pending)


def capped_body(chunks: Iterable[bytes], limit: int = MAX_BODY_BYTES) -> bytes:
    """All of a byte stream; raises TooLong once it passes ``limit`` bytes."""
    body = bytearray()
    for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise TooLong(limit)
    return bytes(body)


def capped_response(response: httpx.Response, limit: int = MAX_BODY_BYTES) -> httpx.Response:
    """``response`` (sent with ``stream=True``) read whole, as a response whose ``json()``
    and ``text`` work; raises TooLong past ``limit`` bytes. ``response`` is closed."""
    try:
        body = capped_body(response.iter_bytes(), limit)
    finally:
        response.close()
    headers = [(k, v) for k, v in response.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    return httpx.Response(response.status_code, headers=headers, content=body,
                          request=response.request)


def _text(line: bytearray) -> str:
    return line.removesuffix(b"\r").decode("utf-8", errors="replace")
