"""What the followers serve, and condition messages that stay the same between retries."""

from __future__ import annotations

from typing import Any

import pytest

from olm.catalogd.content import sanitize
from olm.catalogd.follower import served_reference

DIGEST_REF = "quay.io/org/catalog@sha256:" + "a" * 64


def _catalog(status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "c"}, "spec": {"source": {"type": "Image"}, **spec}, "status": status or {}}


RESOLVED = {"resolvedSource": {"type": "Image", "image": {"ref": DIGEST_REF}}}


@pytest.mark.parametrize(
    ("catalog", "expected"),
    [
        pytest.param(_catalog(RESOLVED), DIGEST_REF, id="resolved"),
        pytest.param(_catalog(), None, id="not-resolved-yet"),
        pytest.param(_catalog(RESOLVED, availabilityMode="Unavailable"), None, id="unavailable"),
        pytest.param(
            {**_catalog(RESOLVED), "metadata": {"name": "c", "deletionTimestamp": "2026-01-01T00:00:00Z"}},
            None,
            id="being-deleted",
        ),
        pytest.param(
            _catalog({"resolvedSource": {"type": "Image", "image": {"ref": "quay.io/org/catalog:latest"}}}),
            None,
            id="tag-is-never-followed",
        ),
    ],
)
def test_followers_serve_only_the_resolved_digest_of_live_available_catalogs(
    catalog: dict[str, Any], expected: str | None
) -> None:
    reference = served_reference(catalog)
    assert (str(reference) if reference is not None else None) == expected


def test_socket_address_pairs_are_dropped_from_messages() -> None:
    first = sanitize("pulling x: read tcp 10.0.0.5:51234->10.0.0.9:443: connection reset by peer")
    second = sanitize("pulling x: read tcp 10.0.0.5:40000->10.0.0.9:443: connection reset by peer")
    assert first == second == "pulling x: connection reset by peer"


def test_messages_without_addresses_are_unchanged() -> None:
    message = "image r.io/c@sha256:ab is not a catalog image"
    assert sanitize(message) == message
