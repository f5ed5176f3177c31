"""The mutating webhook sets the name label on ClusterCatalogs, and only that."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api import names
from olm.catalogd import webhook as catalog_webhook
from olm_runtime.manager import webhook

LABEL = names.METADATA_NAME_LABEL


def _request(operation: str, obj: dict[str, Any] | None) -> webhook.AdmissionRequest:
    review = {
        "apiVersion": webhook.ADMISSION_API_VERSION,
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "operation": operation,
            "kind": {"group": names.GROUP, "version": names.VERSION, "kind": names.CLUSTER_CATALOG},
            "resource": {"group": names.GROUP, "version": names.VERSION, "resource": "clustercatalogs"},
            "name": (obj or {}).get("metadata", {}).get("name", ""),
            "object": obj,
        },
    }
    return webhook.AdmissionRequest.from_review(review)


def _catalog(labels: dict[str, str] | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "operatorhub"}
    if labels is not None:
        metadata["labels"] = labels
    return {"apiVersion": names.API_VERSION, "kind": names.CLUSTER_CATALOG, "metadata": metadata, "spec": {}}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param(None, {LABEL: "operatorhub"}, id="no-labels"),
        pytest.param({"team": "a"}, {"team": "a", LABEL: "operatorhub"}, id="other-labels-kept"),
        pytest.param({LABEL: "forged"}, {LABEL: "operatorhub"}, id="wrong-value-corrected"),
    ],
)
@pytest.mark.parametrize("operation", ["CREATE", "UPDATE"])
async def test_the_label_is_set_to_the_name(
    operation: str, labels: dict[str, str] | None, expected: dict[str, str]
) -> None:
    original = _catalog(labels)
    response = await catalog_webhook.add_name_label(_request(operation, original))
    assert response.allowed
    assert response.patch
    patched = webhook.apply_patch(original, response.patch)
    assert patched["metadata"]["labels"] == expected
    assert {k: v for k, v in patched.items() if k != "metadata"} == {
        k: v for k, v in original.items() if k != "metadata"
    }


async def test_a_correct_label_needs_no_patch() -> None:
    response = await catalog_webhook.add_name_label(_request("CREATE", _catalog({LABEL: "operatorhub"})))
    assert response.allowed
    assert not response.patch


async def test_delete_is_allowed_untouched() -> None:
    response = await catalog_webhook.add_name_label(_request("DELETE", None))
    assert response.allowed
    assert not response.patch
