"""The ClusterCatalog reconciler (leader): resolve the image, unpack it, serve it, report status.

One reconcile is the runtime's `controller.Steps` over a `_State`: named steps run in order until
one returns `STOP`, leaving in the state what the reconcile returns. Status is computed on a copy
and written once, at the end, and only when it changed. The steps:

- `finalizer`: a deleted catalog has its content removed, then the finalizer
  `olm.operatorframework.io/delete-server-cache` is dropped; a live one gets the finalizer.
- `availability`: `availabilityMode: Unavailable` removes the content and reports
  `Serving=False/UserSpecifiedUnavailable`, `Progressing=True/Succeeded`, no resolved source.
- `resolve`: a tag is resolved to a digest when the catalog is new, its spec changed, its content
  is missing or the poll interval elapsed; otherwise the last resolved digest is reused and the
  reconcile requeues at the next poll. Digest references are never polled.
- `unpack`: only when this replica does not serve that digest yet (`Content.ensure`), with Events
  `UnpackStarted`, `UnpackSucceeded`, `UnpackFailed`.
- `serve`: `Progressing=True/Succeeded`, `Serving=True/Available`, `resolvedSource`, `urls.base`
  (`<external address>/catalogs/<name>`) and `lastUnpacked` (when the served version was stored,
  to the second).

Failures: a retryable error (network, a tag whose new image is broken) sets
`Progressing=True/Retrying` and is raised so the workqueue backs off; what was served before stays
served and `Serving`/`resolvedSource` keep describing it. A broken image named by digest cannot
improve: `Progressing=False/Blocked` and a `TerminalError`. Messages are deterministic.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import datetime
import random
from collections.abc import Mapping
from typing import Any

from olm import oci
from olm.api import conditions as api_conditions
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG
from olm.catalogd import metrics
from olm.catalogd.content import Content, ContentError
from olm_runtime import conditions, controller, events, finalizers
from olm_runtime.cache import CacheReader
from olm_runtime.client import Client, errors
from olm_runtime.clock import REAL, Clock
from olm_runtime.controller import CONTINUE, STOP, Next, Steps
from olm_runtime.logging import get_logger
from olm_runtime.manager import Manager

CONTROLLER_NAME = "clustercatalog"
EVENT_COMPONENT = "catalogd"
JITTER_FACTOR = 0.01
"""Requeues for polling come up to 1% late, so catalogs created together spread out."""

MESSAGE_SERVING = "Serving the content unpacked from the resolved source"
MESSAGE_NOT_SERVING = "The catalog content is not available yet"
MESSAGE_USER_UNAVAILABLE = "availabilityMode is Unavailable: the content is not served"
MESSAGE_DELETING = "The catalog is being deleted: its content is no longer served"
MESSAGE_SUCCEEDED = "Unpacked and stored the content of the resolved source"
MESSAGE_USER_UNAVAILABLE_PROGRESSING = "Stopped serving the content as requested by availabilityMode"

_log = get_logger("catalogd.controller")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ControllerOptions:
    """How the ClusterCatalog controller reports and polls."""

    base_url: str = "https://catalogd-service.olmv1-system.svc/catalogs"
    """Prefix of `status.urls.base`; the catalog's name is appended."""
    seconds_per_minute: float = 60.0
    """Length of one minute of `pollIntervalMinutes`. Only tests change it (`--testing-poll-minute`)."""
    jitter_factor: float = JITTER_FACTOR
    """Polls are delayed by up to this fraction of the interval."""


@dataclasses.dataclass
class _State:
    """What one reconcile knows. Each field after `catalog` has one writer step."""

    catalog: dict[str, Any]
    """The object as read (never modified)."""
    status: dict[str, Any]
    """The status being computed (written by every step through the helpers below)."""
    reference: oci.Reference | None = None
    """The digest reference to serve (written by `resolve`)."""
    result: controller.Result = dataclasses.field(default_factory=controller.Result)
    """What the reconcile returns (written by the step that stops, or by `serve` to poll)."""

    @property
    def name(self) -> str:
        return str(self.catalog["metadata"]["name"])

    def resolved(self) -> tuple[oci.Reference, oci.Digest]:
        """The reference `resolve` chose and its digest (the steps after it need both)."""
        if self.reference is None or self.reference.digest is None:
            raise RuntimeError("the resolve step must run before unpack and serve")
        return self.reference, self.reference.digest


class CatalogReconciler:
    """Reconciles ClusterCatalogs on the elected replica; see the module docstring."""

    def __init__(
        self,
        *,
        reader: CacheReader,
        client: Client,
        content: Content,
        recorder: events.EventRecorder,
        options: ControllerOptions = ControllerOptions(),
        clock: Clock = REAL,
    ) -> None:
        self.reader = reader
        self.client = client
        self.content = content
        self.recorder = recorder
        self.options = options
        self.clock = clock
        self._last_poll: dict[str, tuple[int, float, oci.Reference]] = {}
        """Per catalog: the generation, when its source was last resolved, and to what."""
        self.steps = Steps[_State](
            CONTROLLER_NAME, (self._finalizer, self._availability, self._resolve, self._unpack, self._serve)
        )

    async def reconcile(self, request: controller.Request) -> controller.Result:
        try:
            catalog = await self.reader.get(CLUSTER_CATALOG, request.name)
        except errors.NotFound:
            await self._stop_serving(request.name)  # deleted without our finalizer (GC does it too)
            metrics.CONDITIONS.remove(request.name)
            return controller.Result()
        state = _State(catalog=dict(catalog), status=copy.deepcopy(catalog.get("status") or {}))
        try:
            await self.steps.run(state, key=request.name)
        except ContentError as error:
            self._last_poll.pop(request.name, None)
            terminal = error.terminal and _is_digest(state.catalog)
            self._progressing(
                state,
                "False" if terminal else "True",
                api_conditions.REASON_BLOCKED if terminal else api_conditions.REASON_RETRYING,
                error.message,
            )
            await self._write_status(state)
            if terminal:
                raise controller.TerminalError(api_conditions.REASON_BLOCKED, error.message) from error
            raise
        await self._write_status(state)
        return state.result

    # steps --------------------------------------------------------------------------------------

    async def _finalizer(self, state: _State) -> Next:
        catalog = state.catalog
        if finalizers.is_being_deleted(catalog):
            await self._stop_serving(state.name)
            metrics.CONDITIONS.remove(state.name)
            if finalizers.has_finalizer(catalog, names.DELETE_SERVER_CACHE_FINALIZER):
                await finalizers.remove_finalizer(
                    self.client, CLUSTER_CATALOG, catalog, names.DELETE_SERVER_CACHE_FINALIZER
                )
            return STOP  # no status write on an object on its way out
        updated = await finalizers.ensure_finalizer(
            self.client, CLUSTER_CATALOG, catalog, names.DELETE_SERVER_CACHE_FINALIZER
        )
        if updated is not catalog:
            state.catalog = dict(updated)
        return CONTINUE

    async def _availability(self, state: _State) -> Next:
        spec = state.catalog.get("spec") or {}
        if spec.get("availabilityMode", "Available") != "Unavailable":
            return CONTINUE
        await self._stop_serving(state.name)
        self._progressing(
            state, "True", api_conditions.REASON_SUCCEEDED, MESSAGE_USER_UNAVAILABLE_PROGRESSING
        )
        self._serving(
            state, "False", api_conditions.REASON_USER_SPECIFIED_UNAVAILABLE, MESSAGE_USER_UNAVAILABLE
        )
        for key in ("resolvedSource", "urls", "lastUnpacked"):
            state.status.pop(key, None)
        return STOP

    async def _resolve(self, state: _State) -> Next:
        catalog = state.catalog
        name = state.name
        image = ((catalog.get("spec") or {}).get("source") or {}).get("image") or {}
        try:
            reference = oci.Reference.parse(str(image.get("ref") or ""))
        except oci.InvalidReference as error:  # the CRD's CEL rules make this unreachable
            message = f"spec.source.image.ref is not a valid image reference: {error}"
            self._progressing(state, "False", api_conditions.REASON_BLOCKED, message)
            await self._write_status(state)
            raise controller.TerminalError(api_conditions.REASON_BLOCKED, message) from error
        generation = int(catalog["metadata"].get("generation") or 0)
        if reference.digest is not None:
            state.reference = reference
            return CONTINUE
        last = self._last_poll.get(name)
        interval = (
            _poll_interval(image) * self.options.seconds_per_minute
            if image.get("pollIntervalMinutes")
            else None
        )
        now = self.clock.now()
        if (
            last is not None
            and last[0] == generation
            and self.content.served(name, _digest(last[2])) is not None
            and (interval is None or now - last[1] < interval)
        ):
            state.reference = last[2]
            return CONTINUE
        state.reference = await self.content.resolve(reference)
        self._last_poll[name] = (generation, now, state.reference)
        return CONTINUE

    async def _unpack(self, state: _State) -> Next:
        reference, digest = state.resolved()
        name = state.name
        if self.content.served(name, digest) is not None:
            return CONTINUE
        self.recorder.event(
            state.catalog, events.NORMAL, "UnpackStarted", f"Unpacking the catalog image {reference}"
        )
        try:
            ensured = await self.content.ensure(name, reference)
        except ContentError as error:
            self.recorder.event(state.catalog, events.WARNING, "UnpackFailed", error.message)
            raise
        self.recorder.event(
            state.catalog,
            events.NORMAL,
            "UnpackSucceeded",
            f"Unpacked {ensured.stored.count} objects from the catalog image {reference}",
        )
        _log.info("catalog.unpacked", catalog=name, ref=str(reference), objects=ensured.stored.count)
        return CONTINUE

    async def _serve(self, state: _State) -> Next:
        reference, digest = state.resolved()
        name = state.name
        stored = self.content.served(name, digest)
        if stored is None:  # removed concurrently (deletion or GC): come back through the queue
            raise ContentError("the stored content disappeared while it was being served", terminal=False)
        self._progressing(state, "True", api_conditions.REASON_SUCCEEDED, MESSAGE_SUCCEEDED)
        self._serving(state, "True", api_conditions.REASON_AVAILABLE, MESSAGE_SERVING)
        state.status["resolvedSource"] = {"type": "Image", "image": {"ref": str(reference)}}
        state.status["urls"] = {"base": f"{self.options.base_url.rstrip('/')}/{name}"}
        stored_at = datetime.datetime.fromtimestamp(int(stored.stored_at), datetime.UTC)
        state.status["lastUnpacked"] = conditions.timestamp(stored_at)
        image = (state.catalog["spec"].get("source") or {}).get("image") or {}
        if reference_is_tag(image) and image.get("pollIntervalMinutes"):
            interval = _poll_interval(image) * self.options.seconds_per_minute
            last = self._last_poll.get(name)
            elapsed = self.clock.now() - last[1] if last is not None else 0.0
            jitter = random.uniform(0, self.options.jitter_factor) * interval
            state.result = controller.Result(requeue_after=max(0.0, interval - elapsed) + jitter)
            return STOP
        return CONTINUE

    async def _stop_serving(self, name: str) -> None:
        self._last_poll.pop(name, None)
        await self.content.remove(name)

    # status -------------------------------------------------------------------------------------

    def _set(self, state: _State, kind: str, status: conditions.Status, reason: str, message: str) -> None:
        items = state.status.setdefault("conditions", [])
        conditions.set_condition(
            items,
            kind,
            status,
            reason=reason,
            message=message,
            observed_generation=state.catalog["metadata"].get("generation"),
        )

    def _progressing(self, state: _State, status: conditions.Status, reason: str, message: str) -> None:
        self._set(state, api_conditions.TYPE_PROGRESSING, status, reason, message)

    def _serving(self, state: _State, status: conditions.Status, reason: str, message: str) -> None:
        self._set(state, api_conditions.TYPE_SERVING, status, reason, message)

    async def _write_status(self, state: _State) -> None:
        before = state.catalog.get("status") or {}
        status = state.status
        if api_conditions.TYPE_SERVING not in {c.get("type") for c in status.get("conditions") or []}:
            self._serving(state, "False", api_conditions.REASON_UNAVAILABLE, MESSAGE_NOT_SERVING)
        metrics.CONDITIONS.set(state.name, status.get("conditions") or [])
        if status == before:
            return
        patch: dict[str, Any] = {key: status.get(key) for key in set(before) | set(status)}
        with contextlib.suppress(errors.NotFound):  # deleted meanwhile: the next event ends it
            await self.client.patch_status(CLUSTER_CATALOG, state.name, {"status": patch})


def reference_is_tag(image: Mapping[str, Any]) -> bool:
    return "@" not in str(image.get("ref") or "")


def _is_digest(catalog: Mapping[str, Any]) -> bool:
    image = ((catalog.get("spec") or {}).get("source") or {}).get("image") or {}
    return not reference_is_tag(image)


def _poll_interval(image: dict[str, Any]) -> float:
    return float(image.get("pollIntervalMinutes") or 0)


def _digest(reference: oci.Reference) -> oci.Digest:
    assert reference.digest is not None
    return reference.digest


async def setup_with_manager(
    manager: Manager,
    content: Content,
    options: ControllerOptions = ControllerOptions(),
) -> controller.Controller:
    """Wire the ClusterCatalog controller (a leader runnable) into `manager`."""
    reconciler = CatalogReconciler(
        reader=manager.reader,
        client=manager.client,
        content=content,
        recorder=manager.event_recorder(EVENT_COMPONENT),
        options=options,
    )
    builder = controller.Builder(manager).for_(CLUSTER_CATALOG).named(CONTROLLER_NAME)
    return await builder.complete(reconciler)
