"""Revision content digests."""

from __future__ import annotations

from typing import Any

from olm.operator_controller import applier
from olm.operator_controller.applier import revisions


def configmap(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {"k": value},
    }


def test_the_content_digest_ignores_the_revision_name_but_not_the_content() -> None:
    objects = [configmap("a", "1"), configmap("b", "2")]
    one = revisions.content_digest(applier.pack("ext-1", "ext", objects), None)
    two = revisions.content_digest(applier.pack("ext-2", "ext", list(reversed(objects))), None)
    assert one == two
    changed = revisions.content_digest(
        applier.pack("ext-2", "ext", [configmap("a", "1"), configmap("b", "3")]), None
    )
    assert changed != one
    assert revisions.content_digest(applier.pack("ext-2", "ext", objects), 10) != one
