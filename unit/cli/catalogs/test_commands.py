"""What the catalog commands write: the ClusterCatalog `catalog add` creates, the patch of
`catalog update`, and the row `catalog list` shows."""

from __future__ import annotations

from olm.cli.catalogs.commands import catalog_object, catalog_patch
from olm.cli.catalogs.listing import catalog_row


def test_catalog_object_and_patch() -> None:
    assert catalog_object("demo", "r/c:1", poll_minutes=10, priority=5)["spec"] == {
        "source": {"type": "Image", "image": {"ref": "r/c:1", "pollIntervalMinutes": 10}},
        "priority": 5,
    }
    assert catalog_object("demo", "r/c@sha256:00", poll_minutes=None, priority=None)["spec"] == {
        "source": {"type": "Image", "image": {"ref": "r/c@sha256:00"}}
    }
    assert catalog_patch(None, None, 7) == {"spec": {"priority": 7}}
    assert catalog_patch("r/c:2", 3, None) == {
        "spec": {"source": {"image": {"ref": "r/c:2", "pollIntervalMinutes": 3}}}
    }


def test_catalog_row_reads_spec_and_status() -> None:
    catalog = {
        "metadata": {"name": "demo"},
        "spec": {
            "source": {"type": "Image", "image": {"ref": "r/c:1", "pollIntervalMinutes": 5}},
            "priority": 3,
        },
        "status": {
            "conditions": [{"type": "Serving", "status": "True"}],
            "lastUnpacked": "2026-01-01T00:00:00Z",
            "urls": {"base": "https://h/catalogs/demo"},
            "resolvedSource": {"image": {"ref": "r/c@sha256:00"}},
        },
    }
    assert catalog_row(catalog, 2) == {
        "name": "demo",
        "serving": True,
        "lastUnpacked": "2026-01-01T00:00:00Z",
        "packages": 2,
        "image": "r/c:1",
        "resolvedImage": "r/c@sha256:00",
        "pollIntervalMinutes": 5,
        "priority": 3,
        "url": "https://h/catalogs/demo",
    }
    assert catalog_row({"metadata": {"name": "new"}}, None)["serving"] is False
