"""The controller: sources feed a rate-limited queue of Requests, workers run the reconciler."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry import trace

from olm_runtime import logging, tracing, workqueue
from olm_runtime.client import errors
from olm_runtime.clock import REAL, Clock
from olm_runtime.controller._metrics import CONTROLLER, ReconcileResult
from olm_runtime.controller.reconcile import Reconciler, Request, RetryableError, TerminalError
from olm_runtime.controller.source import Source

_log = logging.get_logger("olm_runtime.controller")

EXPECTED_ERRORS: tuple[type[BaseException], ...] = (RetryableError, errors.APIError, OSError, TimeoutError)
"""Exceptions a reconciler is expected to raise to ask for a retry. Anything else escaping a
reconcile is treated as a bug: retried the same way, but logged with its traceback and counted in
`controller_runtime_reconcile_panics_total` (controller-runtime's recovered panics)."""


@dataclass(frozen=True, kw_only=True)
class Options:
    max_concurrent_reconciles: int = 1
    """Workers; one key is never reconciled by two of them at once, whatever this is."""
    reconcile_timeout: float | None = None
    """Seconds after which a reconcile is cancelled and retried with backoff; None: no limit."""
    rate_limiter: workqueue.RateLimiter[Request] | None = None
    """Retry delays; None: client-go's default (per-key 5 ms doubling to 1000 s, max with 10/s burst 100)."""
    cache_sync_timeout: float = 120.0
    """Seconds the sources may take to deliver their initial lists before start() fails."""
    needs_leader_election: bool = True
    """Whether the manager starts this controller only on the elected replica."""


class Controller:
    """Reconciles the Requests its sources produce. A `Runnable`: `start()` runs until cancelled,
    then stops taking work and waits for in-flight reconciles to finish (the caller bounds that)."""

    def __init__(
        self,
        *,
        name: str,
        reconciler: Reconciler,
        sources: Sequence[Source],
        options: Options = Options(),
        clock: Clock = REAL,
        kind: str | None = None,
    ) -> None:
        """`kind` names the reconciled objects' kind in each reconcile's span and log lines."""
        if options.max_concurrent_reconciles < 1:
            raise ValueError("max_concurrent_reconciles must be at least 1")
        self.name = name
        self.reconciler = reconciler
        self.sources = tuple(sources)
        self.options = options
        self.kind = kind
        self.queue: workqueue.RateLimitingQueue[Request] = workqueue.RateLimitingQueue(
            name=name, rate_limiter=options.rate_limiter, clock=clock
        )

    @property
    def needs_leader_election(self) -> bool:
        return self.options.needs_leader_election

    async def start(self) -> None:
        CONTROLLER.initialise(self.name, max_concurrent_reconciles=self.options.max_concurrent_reconciles)
        async with asyncio.TaskGroup() as group:
            for source in self.sources:
                group.create_task(source.start(self.queue), name=f"{self.name}-source")
            async with asyncio.timeout(self.options.cache_sync_timeout):
                for source in self.sources:
                    await source.wait_for_sync()
            for index in range(self.options.max_concurrent_reconciles):
                group.create_task(self._worker(), name=f"{self.name}-worker-{index}")
            _log.info(
                "controller started", controller=self.name, workers=self.options.max_concurrent_reconciles
            )
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                # Finish what is in flight; the workers see ShutDown on their next get and return.
                await self.queue.shut_down_with_drain()
                _log.info("controller stopped", controller=self.name)
                raise

    async def _worker(self) -> None:
        while True:
            try:
                request = await self.queue.get()
            except workqueue.ShutDown:
                return
            try:
                await self.reconcile_once(request)
            finally:
                self.queue.done(request)

    async def reconcile_once(self, request: Request) -> None:
        """Run the reconciler for one request and requeue it as the outcome says."""
        name, family = self.name, CONTROLLER
        reconcile_id = uuid.uuid4().hex[:16]
        identity = {"controller": name, "object": str(request), "reconcile_id": reconcile_id}
        attributes = {"controller": name, "object.name": request.name, "reconcile.id": reconcile_id}
        if request.namespace:
            attributes["object.namespace"] = request.namespace
        if self.kind is not None:
            identity["kind"] = attributes["object.kind"] = self.kind
        family.active_workers.labels(name).inc()
        started = time.monotonic()
        with (
            tracing.tracer().start_as_current_span(f"reconcile {name}", attributes=attributes) as span,
            logging.bound(**identity),
        ):
            result_label = ReconcileResult.ERROR
            deadline = asyncio.timeout(self.options.reconcile_timeout)
            try:
                async with deadline:
                    result = await self.reconciler.reconcile(request)
            except TerminalError as err:
                family.reconcile_errors.labels(name).inc()
                family.terminal_reconcile_errors.labels(name).inc()
                _log.error("reconcile failed terminally", reason=err.reason, error=err.message)
                span.set_status(trace.StatusCode.ERROR, f"{err.reason}: {err.message}")
                self.queue.forget(request)
            except TimeoutError as err:
                family.reconcile_errors.labels(name).inc()
                if deadline.expired():
                    family.reconcile_timeouts.labels(name).inc()
                    _log.error("reconcile timed out", timeout=self.options.reconcile_timeout)
                else:
                    _log.error("reconcile failed", error=str(err) or type(err).__name__)
                span.set_status(trace.StatusCode.ERROR, "timed out")
                self.queue.add_rate_limited(request)
            except Exception as err:
                family.reconcile_errors.labels(name).inc()
                if isinstance(err, EXPECTED_ERRORS):
                    _log.error("reconcile failed", error=str(err))
                else:
                    family.reconcile_panics.labels(name).inc()
                    _log.exception("reconcile raised an unexpected exception")
                span.record_exception(err)
                span.set_status(trace.StatusCode.ERROR, str(err) or type(err).__name__)
                self.queue.add_rate_limited(request)
            else:
                self.queue.forget(request)
                if result.requeue_after is not None:
                    self.queue.add_after(request, result.requeue_after)
                    result_label = ReconcileResult.REQUEUE_AFTER
                else:
                    result_label = ReconcileResult.SUCCESS
            finally:
                family.active_workers.labels(name).dec()
                family.reconcile_time.labels(name).observe(time.monotonic() - started)
            family.reconcile_total.labels(name, result_label.value).inc()
