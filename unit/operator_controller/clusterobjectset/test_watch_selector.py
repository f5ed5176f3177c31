"""Which objects a drift informer selects: the owner's (shared by its revisions), else the revision's."""

from __future__ import annotations

import pytest

from olm.api import names
from olm.api.ownership import Revision
from olm.operator_controller.clusterobjectset.watches import selector_for

OWNED = {names.OWNER_KIND_LABEL: "ClusterExtension", names.OWNER_NAME_LABEL: "argocd"}


@pytest.mark.parametrize(
    ("labels", "selector"),
    [
        pytest.param(
            OWNED,
            "olm.operatorframework.io/owner-kind=ClusterExtension,olm.operatorframework.io/owner-name=argocd",
            id="revisions-of-an-extension-share-its-selector",
        ),
        pytest.param(
            {names.OWNER_NAME_LABEL: "argocd"},
            "olm.operatorframework.io/revision-name=argocd-2",
            id="half-an-owner-is-no-owner",
        ),
        pytest.param({}, "olm.operatorframework.io/revision-name=argocd-2", id="hand-written-revision"),
    ],
)
def test_selector(labels: dict[str, str], selector: str) -> None:
    assert selector_for(Revision("argocd-2", "uid-2", 2, labels)) == selector


def test_two_revisions_of_one_owner_select_the_same_objects() -> None:
    assert selector_for(Revision("argocd-1", "u1", 1, OWNED)) == selector_for(
        Revision("argocd-2", "u2", 2, OWNED)
    )
