"""What keeping a CRD does to its conversion (`teardown.conversion_on_removal`): `None` conversion
only where it loses nothing, and only for a webhook that goes away with the extension."""

from __future__ import annotations

from typing import Any

from olm.operator_controller.clusterobjectset.teardown import conversion_on_removal

SERVICE = ("widgets-system", "widgets-webhook")
REMOVED = frozenset({SERVICE})


def _schema(*fields: str) -> dict[str, Any]:
    return {"openAPIV3Schema": {"type": "object", "properties": {f: {"type": "string"} for f in fields}}}


def crd(versions: dict[str, dict[str, Any]], *, webhook: bool = True) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "group": "example.com",
        "versions": [
            {"name": name, "served": True, "storage": index == 0, "schema": schema}
            for index, (name, schema) in enumerate(versions.items())
        ],
    }
    if webhook:
        spec["conversion"] = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {"namespace": SERVICE[0], "name": SERVICE[1], "path": "/convert"}
                },
            },
        }
    return {"metadata": {"name": "widgets.example.com"}, "spec": spec}


def test_one_schema_for_every_version_switches_to_none_conversion() -> None:
    conversion, note = conversion_on_removal(crd({"v1": _schema("a"), "v2": _schema("a")}), REMOVED)
    assert conversion == {"strategy": "None"}
    assert "Service widgets-system/widgets-webhook" in note
    assert "now uses None conversion" in note


def test_a_single_version_switches_to_none_conversion() -> None:
    conversion, _ = conversion_on_removal(crd({"v1": _schema("a")}), REMOVED)
    assert conversion == {"strategy": "None"}


def test_different_schemas_keep_the_webhook_and_say_why() -> None:
    conversion, note = conversion_on_removal(crd({"v1": _schema("a"), "v2": _schema("b")}), REMOVED)
    assert conversion is None
    assert "keeps its conversion webhook" in note
    assert "v1, v2 have different schemas" in note
    assert "read only in the version they are stored in" in note


def test_a_webhook_served_by_something_that_stays_is_left_alone() -> None:
    assert conversion_on_removal(crd({"v1": _schema("a")}), frozenset()) == (None, "")


def test_a_crd_without_webhook_conversion_is_left_alone() -> None:
    assert conversion_on_removal(crd({"v1": _schema("a"), "v2": _schema("b")}, webhook=False), REMOVED) == (
        None,
        "",
    )
