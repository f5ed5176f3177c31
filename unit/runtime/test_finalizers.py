"""The finalizer helpers' pure parts, and that they make no write when there is nothing to do.

What the API server does with the writes (the resourceVersion precondition, deletion once the last
finalizer is gone) is checked against a real control plane in e2e/runtime/test_finalizers.py.
"""

from __future__ import annotations

from typing import Any, NoReturn

from olm_runtime import finalizers
from olm_runtime.client import Client, kinds

FINALIZER = "example.com/cleanup"


def config_map(**metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "ns", "resourceVersion": "5", **metadata},
    }


class NoWrites:
    """A client that fails the test if it is asked to write anything."""

    async def patch(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError(f"unexpected patch {args} {kwargs}")


def test_has_finalizer_looks_only_at_metadata_finalizers() -> None:
    assert finalizers.has_finalizer(config_map(finalizers=["a", FINALIZER]), FINALIZER)
    assert not finalizers.has_finalizer(config_map(finalizers=["a"]), FINALIZER)
    assert not finalizers.has_finalizer(config_map(finalizers=None), FINALIZER)
    assert not finalizers.has_finalizer(config_map(), FINALIZER)
    assert not finalizers.has_finalizer({}, FINALIZER), "an object without metadata has none"


def test_is_being_deleted_follows_the_deletion_timestamp() -> None:
    assert finalizers.is_being_deleted(config_map(deletionTimestamp="2026-01-01T00:00:00Z"))
    assert not finalizers.is_being_deleted(config_map())
    assert not finalizers.is_being_deleted(config_map(deletionTimestamp=None))
    assert not finalizers.is_being_deleted({})


async def test_ensure_finalizer_returns_the_object_itself_when_the_finalizer_is_there() -> None:
    obj = config_map(finalizers=[FINALIZER])
    client: Any = NoWrites()
    assert await finalizers.ensure_finalizer(client, kinds.CONFIG_MAP, obj, FINALIZER) is obj


async def test_remove_finalizer_returns_the_object_itself_when_the_finalizer_is_absent() -> None:
    obj = config_map(finalizers=["other.example.com/keep"])
    client: Any = NoWrites()
    assert await finalizers.remove_finalizer(client, kinds.CONFIG_MAP, obj, FINALIZER) is obj


class Recording:
    """Records the patch the helpers send; the server's answer is the patched object."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, str, dict[str, Any], dict[str, Any]]] = []

    async def patch(self, gvk: Any, name: str, patch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        self.calls.append((gvk, name, patch, kwargs))
        return config_map(finalizers=patch["metadata"]["finalizers"], resourceVersion="6")


async def test_every_write_carries_the_read_resource_version_as_a_precondition() -> None:
    recording = Recording()
    client: Client = recording  # type: ignore[assignment]
    obj = config_map(finalizers=["other.example.com/keep"])
    added = await finalizers.ensure_finalizer(client, kinds.CONFIG_MAP, obj, FINALIZER)
    removed = await finalizers.remove_finalizer(client, kinds.CONFIG_MAP, added, "other.example.com/keep")
    (gvk, name, first, options), (_, _, second, _) = recording.calls
    assert (gvk, name, options["namespace"]) == (kinds.CONFIG_MAP, "cm", "ns")
    assert first == {
        "metadata": {"finalizers": ["other.example.com/keep", FINALIZER], "resourceVersion": "5"}
    }
    assert second == {"metadata": {"finalizers": [FINALIZER], "resourceVersion": "6"}}
    assert removed["metadata"]["finalizers"] == [FINALIZER]
