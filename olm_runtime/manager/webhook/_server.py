"""The HTTPS server that answers the API server's AdmissionReview calls."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import tempfile
import time
from pathlib import Path
from typing import ClassVar

import orjson
from aiohttp import web
from prometheus_client import Counter, Gauge, Histogram

from olm_runtime import logging, metrics
from olm_runtime.manager import _http
from olm_runtime.manager.certwatcher import ServingCertificate
from olm_runtime.manager.webhook._admission import AdmissionRequest, Handler, InvalidReview, errored

__all__ = ["DEFAULT_CERT_DIR", "WebhookOptions", "WebhookServer"]

_log = logging.get_logger("olm_runtime.manager.webhook")

DEFAULT_CERT_DIR = Path(tempfile.gettempdir()) / "k8s-webhook-server" / "serving-certs"
"""Where the serving certificate is looked for unless `WebhookOptions.cert_dir` says otherwise."""

_MAX_BODY = 8 * 2**20  # an AdmissionReview carries the object twice (old and new); etcd allows 1.5 MiB each
_PATH = re.compile(r"^/[A-Za-z0-9._~/-]*$")

REQUESTS = Counter(
    "controller_runtime_webhook_requests_total",
    "Total number of admission requests by HTTP status code.",
    ("webhook", "code"),
    registry=metrics.REGISTRY,
)
LATENCY = Histogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests.",
    ("webhook",),
    registry=metrics.REGISTRY,
)
IN_FLIGHT = Gauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ("webhook",),
    registry=metrics.REGISTRY,
)
PANICS = Counter(
    "controller_runtime_webhook_panics_total",
    "Total number of webhook handlers that raised instead of answering.",
    registry=metrics.REGISTRY,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WebhookOptions(ServingCertificate):
    """Where the webhook server listens, and the certificate it serves (`ServingCertificate`: the
    files, the oldest TLS version, the poll interval)."""

    host: str = ""
    """The interface to listen on; empty means every interface."""
    port: int = 9443
    """The port to listen on."""
    cert_dir: Path | None = DEFAULT_CERT_DIR
    """The directory holding the serving certificate and key (a mounted Secret, typically); the
    webhook server always has one, `DEFAULT_CERT_DIR` unless set."""

    _server_name: ClassVar[str] = "the webhook server"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.cert_dir is None:
            raise ValueError("the webhook server needs a cert_dir")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port {self.port} is out of range")


class WebhookServer:
    """Serves registered admission handlers over HTTPS; a runnable on every replica.

    `register(path, handler)` before or while it runs. Each POST to a path must carry an
    AdmissionReview v1; the handler's `AdmissionResponse` is sent back with the request's uid. A
    handler that raises answers `errored(...)` (code 500) and counts in
    `controller_runtime_webhook_panics_total`; a malformed body is answered with HTTP 400. The serving
    certificate is re-read when its files change (see `olm_runtime.manager.certwatcher`).

    The manager adds it (after the probe and metrics servers, before the caches) when at least one
    handler is registered.
    """

    needs_leader_election = False

    def __init__(self, options: WebhookOptions | None = None) -> None:
        self.options = options if options is not None else WebhookOptions()
        self._handlers: dict[str, Handler] = {}
        self._server: _http.Server | None = None
        self._started = asyncio.Event()

    @property
    def paths(self) -> list[str]:
        """The registered paths, in registration order."""
        return list(self._handlers)

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """The (host, port) pairs listened on, once started."""
        return self._server.addresses if self._server is not None else []

    def register(self, path: str, handler: Handler) -> None:
        """Serve `handler` at `path` (e.g. `/mutate-v1-configmap`); a path is registered once."""
        if not _PATH.match(path):
            raise ValueError(f"webhook path {path!r} must start with '/' and hold URL path characters only")
        if path in self._handlers:
            raise ValueError(f"webhook path {path!r} is already registered")
        self._handlers[path] = handler

    async def wait_started(self) -> None:
        """Return once the server listens."""
        await self._started.wait()

    async def started_check(self) -> None:
        """A ready check: fails until the server listens."""
        if not self._started.is_set():
            raise RuntimeError("webhook server not listening yet")

    async def start(self) -> None:
        """Load the certificate, listen, and serve until cancelled. Fails at once if the certificate
        cannot be read or the port is taken."""
        watcher = self.options.watcher()
        watcher.load()
        app = web.Application(client_max_size=_MAX_BODY)
        app.router.add_route("*", "/{path:.*}", self._dispatch)
        self._server = _http.Server(
            "webhook",
            app,
            self.options.host or None,
            self.options.port,
            ssl_context=watcher.server_context(),
        )
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._server.start(), name="webhook-server")
                group.create_task(watcher.start(), name="webhook-certwatcher")
                await self._server.wait_started()
                self._started.set()
                _log.info("webhook server listening", addresses=self.addresses, paths=self.paths)
        except ExceptionGroup as group_error:
            # Only the server can fail (say, the port is taken): raise its error, not a group of one.
            raise group_error.exceptions[0] from None
        finally:
            self._started.clear()

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        handler = self._handlers.get(request.path)
        if handler is None:
            return web.Response(status=404, text=f"no webhook at {request.path}\n")
        if request.method != "POST":
            return web.Response(status=405, text="webhooks accept POST only\n")
        IN_FLIGHT.labels(request.path).inc()
        began = time.perf_counter()
        try:
            response = await self._admit(request, handler)
        finally:
            IN_FLIGHT.labels(request.path).dec()
        LATENCY.labels(request.path).observe(time.perf_counter() - began)
        REQUESTS.labels(request.path, str(response.status)).inc()
        return response

    async def _admit(self, request: web.Request, handler: Handler) -> web.Response:
        if request.content_type != "application/json":
            return web.Response(status=415, text="expected Content-Type application/json\n")
        try:
            admission = AdmissionRequest.from_review(orjson.loads(await request.read()))
        except (orjson.JSONDecodeError, InvalidReview) as e:
            return web.Response(status=400, text=f"bad AdmissionReview: {e}\n")
        try:
            answer = await handler(admission)
        except Exception as e:
            PANICS.inc()
            _log.exception("webhook handler raised", webhook=request.path, uid=admission.uid)
            answer = errored(f"webhook {request.path} failed: {e}")
        return web.Response(
            body=orjson.dumps(answer.to_review(admission.uid)), content_type="application/json"
        )
