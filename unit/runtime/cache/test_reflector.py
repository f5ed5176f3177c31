"""The reflector's state machine, driven through the transport seam with scripted answers and fake time."""

from __future__ import annotations

import pytest

from olm_runtime import cache
from olm_runtime.client import errors
from olm_runtime.clock import FakeClock
from unit.runtime.cache.fakes import (
    CONFIGMAPS,
    NAMESPACES,
    PAGED,
    START,
    FakeTransport,
    RecordingSink,
    Watch,
    bookmark,
    cm,
    error_event,
    event,
    gone,
    page,
    run_until,
    running,
    throttled,
    too_large,
)


def make(
    transport: FakeTransport,
    *,
    options: cache.ReflectorOptions = PAGED,
    rand: float = 0.5,
    **kwargs: object,
) -> tuple[cache.Reflector, RecordingSink, FakeClock]:
    sink = RecordingSink()
    clock = FakeClock(start=START)
    reflector = cache.Reflector(
        transport,
        kwargs.pop("resource", CONFIGMAPS),  # type: ignore[arg-type]
        sink,
        options=options,
        clock=clock,
        rand=lambda: rand,
        transform=cache.strip_managed_fields,
        **kwargs,  # type: ignore[arg-type]
    )
    return reflector, sink, clock


async def test_first_list_reads_the_watch_cache_in_pages_then_watches_from_the_lists_version() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 5)], 10, "tok"), page([cm("b", 7)], 10)])
    live = Watch(end="live")
    transport.watches.append(live)
    reflector, sink, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: live.opened)
    first, second = transport.list_calls
    assert first.path == "/api/v1/configmaps"
    assert first.params == {"resourceVersion": "0", "limit": "500"}
    assert second.params == {"limit": "500", "continue": "tok"}  # no resourceVersion with continue
    objects, rv = sink.replaced[0]
    assert rv == "10"
    assert [o["kind"] for o in objects] == ["ConfigMap", "ConfigMap"]  # list items get their kind
    assert all("managedFields" not in o["metadata"] for o in objects)  # the transform ran
    (watch,) = transport.watch_calls
    assert watch.params["resourceVersion"] == "10"
    assert watch.params["allowWatchBookmarks"] == "true"
    assert watch.params["watch"] == "true"
    assert reflector.synced
    assert reflector.statistics().pages == 2


@pytest.mark.parametrize(
    ("rand", "seconds"),
    [pytest.param(0.0, "300", id="low-end"), pytest.param(0.999, "599", id="high-end")],
)
async def test_each_watch_asks_for_a_random_server_timeout_of_five_to_ten_minutes(
    rand: float, seconds: str
) -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 3))
    transport.watches.append(Watch(end="live"))
    reflector, _, clock = make(transport, rand=rand)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 1)
    assert transport.watch_calls[0].params["timeoutSeconds"] == seconds


async def test_watch_events_reach_the_sink_and_advance_the_resource_version() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 5)], 10))
    transport.watches.append(
        Watch(
            [event("ADDED", cm("b", 11)), event("MODIFIED", cm("a", 12)), event("DELETED", cm("b", 13))],
            "live",
        )
    )
    reflector, sink, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(sink.calls) == 4)
        assert sink.calls == [("replace", ["a"]), ("added", "b"), ("modified", "a"), ("deleted", "b")]
        assert reflector.resource_version == "13"


async def test_a_bookmark_advances_the_version_and_a_closed_watch_resumes_there_without_relisting() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    transport.watches.extend([Watch([bookmark(42)], "close"), Watch(end="live")])
    reflector, sink, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
    assert transport.watch_calls[1].params["resourceVersion"] == "42"
    assert len(transport.list_calls) == 1
    assert clock.sleeps == []  # a normal close reconnects at once
    assert [c[0] for c in sink.calls] == ["replace"]


async def test_410_gone_on_the_watch_relists_at_the_last_resource_version_without_paging() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 5), cm("b", 6)], 10), page([cm("a", 20)], 25)])
    transport.watches.extend(
        [Watch([event("MODIFIED", cm("a", 15)), error_event(410, "Expired")]), Watch(end="live")]
    )
    reflector, sink, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
        stats = reflector.statistics()
    relist = transport.list_calls[1]
    assert relist.params == {"resourceVersion": "15"}  # served by the watch cache: no limit
    assert transport.watch_calls[1].params["resourceVersion"] == "25"
    assert sink.calls[-1] == ("replace", ["a"])
    assert stats.expired == 1
    assert stats.lists == 2
    assert len(clock.sleeps) == 1  # one backoff between the watch ending and the relist


@pytest.mark.parametrize(
    "failure",
    [pytest.param(gone(), id="410-gone"), pytest.param(too_large(), id="too-large-resource-version")],
)
async def test_a_list_at_an_unavailable_resource_version_falls_back_to_a_consistent_read(
    failure: errors.APIError,
) -> None:
    transport = FakeTransport()
    transport.lists.extend([page([], 10), failure, page([cm("a", 30)], 31, "tok"), page([], 31)])
    transport.watches.extend([Watch([error_event(410, "Expired")]), Watch(end="live")])
    reflector, _, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
    at_last, consistent, next_page = transport.list_calls[1:]
    assert at_last.params == {"resourceVersion": "10"}
    assert consistent.params == {"limit": "500"}  # resourceVersion "" (unset): a quorum read, paged
    assert next_page.params == {"limit": "500", "continue": "tok"}
    assert transport.watch_calls[1].params["resourceVersion"] == "31"
    assert reflector.statistics().expired == 2


async def test_429_on_opening_a_watch_waits_for_retry_after_and_rewatches_without_relisting() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    transport.watches.extend([throttled(7.0), Watch(end="live")])
    reflector, _, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
    assert len(transport.list_calls) == 1
    assert clock.sleeps[0] >= 7.0
    assert transport.watch_calls[1].params["resourceVersion"] == "10"
    assert reflector.statistics().throttled == 1


async def test_429_in_the_watch_stream_waits_and_rewatches_from_the_last_version() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    transport.watches.extend(
        [Watch([event("ADDED", cm("a", 11)), error_event(429, "TooManyRequests", "slow")]), Watch(end="live")]
    )
    reflector, _, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
    assert len(transport.list_calls) == 1
    assert transport.watch_calls[1].params["resourceVersion"] == "11"
    assert len(clock.sleeps) == 1


async def test_a_silent_watch_is_reopened_by_the_watchdog_from_the_last_resource_version() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    stalled = Watch([event("ADDED", cm("a", 11))], "stall")
    transport.watches.extend([stalled, Watch(end="live")])
    options = cache.ReflectorOptions(list_mode=cache.ListMode.PAGED, inactivity_timeout=45.0)
    reflector, _, clock = make(transport, options=options)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 1)
        opened_at = clock.now()
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
        assert clock.now() - opened_at == pytest.approx(45.0)
        stats = reflector.statistics()
    assert stalled.closed
    assert transport.watch_calls[1].params["resourceVersion"] == "11"
    assert len(transport.list_calls) == 1  # no relist
    assert stats.watchdog_reconnects == 1
    assert clock.sleeps == []


async def test_watch_age_and_last_event_age_are_exposed() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    reflector, _, clock = make(transport)
    assert reflector.statistics().watch_age is None
    async with running(reflector.run):
        await run_until(clock, lambda: live.opened)
        clock.advance(20.0)
        live.feed(bookmark(11))
        await run_until(clock, lambda: reflector.resource_version == "11")
        clock.advance(5.0)
        stats = reflector.statistics()
    assert stats.watch_age == pytest.approx(25.0)
    assert stats.last_event_age == pytest.approx(5.0)


async def test_a_broken_connection_backs_off_and_rewatches_without_relisting() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    refused = errors.TransportError("connection refused")
    transport.watches.extend([Watch([], errors.TransportError("reset")), refused, refused, Watch(end="live")])
    reflector, _, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 4)
    assert len(transport.list_calls) == 1
    assert {c.params["resourceVersion"] for c in transport.watch_calls} == {"10"}
    assert len(clock.sleeps) == 3
    assert clock.sleeps[0] < clock.sleeps[1] < clock.sleeps[2]


async def test_a_watch_closed_at_once_without_events_counts_as_an_error_and_relists() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([], 10), page([], 10)])
    transport.watches.extend([Watch([], "close"), Watch(end="live")])
    reflector, _, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
        stats = reflector.statistics()
    assert len(transport.list_calls) == 2
    assert stats.errors == 1
    assert "VeryShortWatch" in (stats.last_error or "")


async def test_failures_back_off_exponentially_with_jitter_then_relist() -> None:
    transport = FakeTransport()
    boom = errors.InternalError(500, "InternalError", "etcd unavailable")
    transport.lists.extend([boom] * 8 + [page([], 10)])
    transport.watches.append(Watch(end="live"))
    reflector, _, clock = make(transport, rand=0.5)
    async with running(reflector.run):
        await run_until(clock, lambda: reflector.synced)
    # base 0.8 s doubling to the 30 s cap, each stretched by (1 + jitter * 0.5)
    assert clock.sleeps == pytest.approx([1.2, 2.4, 4.8, 9.6, 19.2, 38.4, 45.0, 45.0])
    assert reflector.statistics().errors == 8


async def test_a_paged_list_whose_continuation_expires_is_fetched_again_in_one_request() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 1)], 10, "tok"), gone(), page([cm("a", 1), cm("b", 2)], 12)])
    transport.watches.append(Watch(end="live"))
    reflector, sink, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: reflector.synced)
    assert transport.list_calls[2].params == {"resourceVersion": "0"}
    assert sink.calls == [("replace", ["a", "b"])]


async def test_when_the_first_list_came_in_pages_later_lists_keep_paging() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 1)], 10, "tok"), page([], 10), page([], 20)])
    transport.watches.extend([Watch([error_event(410, "Expired")]), Watch(end="live")])
    reflector, _, clock = make(transport)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
    assert transport.list_calls[2].params == {"resourceVersion": "10", "limit": "500"}


async def test_selectors_namespace_and_metadata_only_shape_every_request() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    transport.watches.append(Watch(end="live"))
    reflector, _, clock = make(
        transport,
        namespace="ns1",
        label_selector="app=web",
        field_selector="metadata.name=x",
        metadata_only=True,
    )
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 1)
    (listed,), (watched,) = transport.list_calls, transport.watch_calls
    for call in (listed, watched):
        assert call.path == "/api/v1/namespaces/ns1/configmaps"
        assert call.params["labelSelector"] == "app=web"
        assert call.params["fieldSelector"] == "metadata.name=x"
    assert listed.headers["Accept"].startswith(
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    )
    assert watched.headers["Accept"].startswith(
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    )


async def test_a_cluster_scoped_kind_ignores_the_namespace() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    transport.watches.append(Watch(end="live"))
    reflector, _, clock = make(transport, resource=NAMESPACES, namespace="ignored")
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 1)
    assert transport.list_calls[0].path == "/api/v1/namespaces"


# Streaming lists (WatchList) ----------------------------------------------------------------------

STREAMING = cache.ReflectorOptions(list_mode=cache.ListMode.STREAMING)


async def test_a_streaming_list_fills_the_sink_at_the_initial_events_end_bookmark_and_keeps_the_stream() -> (
    None
):
    transport = FakeTransport()
    stream = Watch(
        [
            event("ADDED", cm("b", 9)),
            event("ADDED", cm("a", 7)),
            bookmark(8),  # a progress bookmark during the initial events is not the end
            bookmark(12, initial_events_end=True),
        ],
        "live",
    )
    transport.watches.append(stream)
    reflector, sink, clock = make(transport, options=STREAMING)
    async with running(reflector.run):
        await run_until(clock, lambda: reflector.synced)
        assert sink.calls == [("replace", ["a", "b"])]
        assert reflector.resource_version == "12"
        stream.feed(event("MODIFIED", cm("a", 13)))
        await run_until(clock, lambda: reflector.resource_version == "13")
    assert sink.calls[-1] == ("modified", "a")
    (call,) = transport.watch_calls  # the same stream goes on: no second watch, no list
    assert transport.list_calls == []
    assert call.params["sendInitialEvents"] == "true"
    assert call.params["resourceVersionMatch"] == "NotOlderThan"
    assert call.params["allowWatchBookmarks"] == "true"
    assert "resourceVersion" not in call.params  # the first one is a consistent read
    assert all("managedFields" not in o["metadata"] for o in sink.replaced[0][0])
    assert reflector.statistics().streaming_lists == 1


async def test_a_cached_first_streaming_list_asks_for_resource_version_zero_then_for_the_last_seen() -> None:
    transport = FakeTransport()
    transport.watches.extend(
        [
            Watch([event("ADDED", cm("a", 7)), bookmark(12, initial_events_end=True)], "close"),
            Watch([bookmark(14)], "live"),
        ]
    )
    options = cache.ReflectorOptions(list_mode=cache.ListMode.STREAMING, cached_first_list=True)
    reflector, sink, clock = make(transport, options=options)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
    first, second = transport.watch_calls
    assert first.params["resourceVersion"] == "0"  # the watch cache as it stands: no wait
    assert first.params["sendInitialEvents"] == "true"
    assert first.params["resourceVersionMatch"] == "NotOlderThan"
    assert second.params["resourceVersion"] == "12"  # the watch goes on from what was synced
    assert "sendInitialEvents" not in second.params
    assert sink.calls[0] == ("replace", ["a"])


async def test_events_before_the_end_of_a_streaming_list_do_not_move_the_resource_version() -> None:
    transport = FakeTransport()
    transport.watches.extend([Watch([event("ADDED", cm("a", 50)), bookmark(55)], "stall"), Watch(end="live")])
    transport.lists.append(page([], 60))
    reflector, _, clock = make(transport, options=STREAMING)
    async with running(reflector.run):
        await run_until(clock, lambda: reflector.synced)
    # the watchdog ended the stream before its bookmark: fall back to a paged list this time
    assert transport.list_calls[0].params == {"resourceVersion": "0", "limit": "500"}
    assert transport.watch_calls[1].params["resourceVersion"] == "60"
    assert reflector.statistics().streaming  # still to be tried on the next relist


async def test_a_server_that_rejects_streaming_lists_gets_paged_lists_from_then_on() -> None:
    transport = FakeTransport()
    rejected = errors.Invalid(
        422,
        "Invalid",
        "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
    )
    transport.watches.extend([rejected, Watch([error_event(410, "Expired")]), Watch(end="live")])
    transport.lists.extend([page([cm("a", 1)], 10), page([cm("a", 1)], 20)])
    reflector, sink, clock = make(transport, options=STREAMING)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 3)
        stats = reflector.statistics()
    assert [("sendInitialEvents" in c.params) for c in transport.watch_calls] == [True, False, False]
    assert len(transport.list_calls) == 2
    assert not stats.streaming
    assert sink.calls == [("replace", ["a"]), ("replace", ["a"])]


async def test_a_streaming_list_at_an_expired_version_retries_as_a_consistent_stream() -> None:
    transport = FakeTransport()
    transport.watches.extend(
        [
            Watch([bookmark(10, initial_events_end=True), error_event(410, "Expired")]),
            Watch([error_event(410, "Expired")]),
            Watch([bookmark(30, initial_events_end=True)], "live"),
        ]
    )
    reflector, _, clock = make(transport, options=STREAMING)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 3 and reflector.resource_version == "30")
    assert transport.watch_calls[1].params["resourceVersion"] == "10"
    assert "resourceVersion" not in transport.watch_calls[2].params
    assert transport.list_calls == []


async def test_a_throttled_streaming_list_waits_and_tries_again() -> None:
    transport = FakeTransport()
    transport.watches.extend([throttled(3.0), Watch([bookmark(10, initial_events_end=True)], "live")])
    reflector, _, clock = make(transport, options=STREAMING)
    async with running(reflector.run):
        await run_until(clock, lambda: reflector.synced)
    assert clock.sleeps[0] >= 3.0
    assert transport.list_calls == []


async def test_nothing_but_cancellation_ends_run() -> None:
    transport = FakeTransport()
    transport.lists.extend(
        [
            errors.Forbidden(403, "Forbidden", 'configmaps is forbidden: User "x" cannot list'),
            b"this is not JSON",
            TimeoutError(),
            errors.TransportError("connection reset by peer"),
            page([cm("a", 1)], 10),
            page([cm("a", 1)], 20),
        ]
    )
    transport.watches.extend(
        [
            Watch([b"{malformed", event("ADDED", cm("b", 11))]),  # a bad line: relist, not a crash
            Watch(end="live"),
        ]
    )
    reflector, sink, clock = make(transport)
    async with running(reflector.run) as task:
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
        assert not task.done(), "run() ended on its own"
        stats = reflector.statistics()
    assert task.cancelled()
    assert stats.errors == 5
    assert len(transport.list_calls) == 6
    assert [call for call, _ in sink.calls if call == "replace"] == ["replace", "replace"]


async def test_statistics_count_lists_pages_watches_reconnects_410s_429s_and_errors() -> None:
    transport = FakeTransport()
    transport.lists.extend(
        [
            page([cm("a", 1)], 10, "more"),  # the first list, in two pages
            page([cm("b", 2)], 10),
            errors.InternalError(
                500, "InternalError", "etcd leader changed"
            ),  # the relist after the 410 fails
            page([cm("a", 1), cm("b", 2)], 30, "more"),
            page([], 30),
        ]
    )
    transport.watches.extend(
        [
            Watch([event("ADDED", cm("c", 11))], "stall"),  # silent: the watchdog reopens it
            throttled(1.0),
            Watch([error_event(410, "Expired", "too old")]),
            Watch(end="live"),
        ]
    )
    options = cache.ReflectorOptions(list_mode=cache.ListMode.PAGED, inactivity_timeout=45.0)
    reflector, _, clock = make(transport, options=options)
    async with running(reflector.run):
        await run_until(clock, lambda: len(transport.watch_calls) == 4 and reflector.resource_version == "30")
        stats = reflector.statistics()
    assert (stats.lists, stats.pages, stats.streaming_lists) == (2, 4, 0), "a failed list is not counted"
    assert stats.watches == 3, "the watch refused with 429 never opened"
    assert stats.watchdog_reconnects == 1
    # errors counts every failure that backed off: the 429 and the 500 (a 410 relists at once).
    assert (stats.expired, stats.throttled, stats.errors) == (1, 1, 2)
    assert "etcd leader changed" in (stats.last_error or "")
    assert stats.synced
    assert stats.resource_version == "30"
