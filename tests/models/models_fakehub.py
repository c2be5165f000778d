"""A local stand-in for the Hugging Face `resolve` endpoint, bound to 127.0.0.1 only."""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any


@dataclass
class FakeHub:
    """A tiny HTTP server that answers like the Hugging Face `resolve` endpoint.

    `drop_after[path] = n` cuts the connection after n body bytes, once; `requests` records
    (method, path, Range header) so tests can see resumes.
    """

    files: dict[str, bytes] = field(default_factory=dict)
    drop_after: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    commit: str = "0123456789abcdef0123456789abcdef01234567"
    url: str = ""
    sha256: dict[str, str] = field(default_factory=dict)

    def add(self, path: str, data: bytes, sha256: str) -> None:
        self.files[path] = data
        self.sha256[path] = sha256


def make_handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _common(self, method: str) -> tuple[bytes, int] | None:
            rng = self.headers.get("Range")
            hub.requests.append((method, self.path, rng))
            data = hub.files.get(self.path)
            if data is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            start = 0
            if rng and rng.startswith("bytes="):
                start = int(rng[6:].split("-")[0])
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            etag = f'"{hub.sha256[self.path]}"'
            self.send_header("Content-Length", str(len(data) - start))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", etag)
            self.send_header("X-Linked-Etag", etag)
            self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("X-Repo-Commit", hub.commit)
            self.end_headers()
            return data, start

        def do_HEAD(self) -> None:
            self._common("HEAD")

        def do_GET(self) -> None:
            found = self._common("GET")
            if found is None:
                return
            data, start = found
            body = data[start:]
            cut = hub.drop_after.pop(self.path, None)
            if cut is not None:
                self.wfile.write(body[:cut])
                self.wfile.flush()
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(body)

    return Handler
