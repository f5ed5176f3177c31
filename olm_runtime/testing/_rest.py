"""A minimal blocking HTTPS client for the harness itself (health checks, node objects).

The harness starts processes synchronously, outside any event loop, so it cannot use the runtime's
async client; this is deliberately tiny: JSON in, JSON out, errors carry the status and body.
"""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


class RESTError(RuntimeError):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body


@dataclass(frozen=True, kw_only=True)
class RESTClient:
    server: str
    """Base URL, e.g. https://127.0.0.1:6443."""
    ca_file: Path
    cert_file: Path | None = None
    key_file: Path | None = None
    timeout: float = 10.0

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.ca_file))
        if self.cert_file is not None:
            context.load_cert_chain(str(self.cert_file), str(self.key_file) if self.key_file else None)
        return context

    def raw(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> tuple[int, bytes]:
        url = urlsplit(self.server)
        connection = http.client.HTTPSConnection(
            url.hostname or "127.0.0.1", url.port, timeout=self.timeout, context=self._context()
        )
        try:
            headers = {"Accept": "application/json"}
            if body is not None:
                headers["Content-Type"] = content_type
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        status, data = self.raw(method, path, payload, content_type)
        if status >= 300:
            raise RESTError(status, data.decode(errors="replace"))
        return json.loads(data) if data else None
