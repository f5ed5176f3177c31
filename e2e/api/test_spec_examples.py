"""Every v1 example of the spec is accepted as written, and stored without losing a field."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.api.conftest import Objects, unique_name
from olm.api import models as api
from olm_testkit.api.specexamples import EXAMPLES, Example

pytestmark = pytest.mark.e2e

_MODELS = {r.info.kind: r for r in api.RESOURCES}


def _contains(stored: Any, sent: Any) -> bool:
    """Whether everything `sent` holds is in `stored` unchanged (the server may add defaults)."""
    if isinstance(sent, dict):
        return isinstance(stored, dict) and all(
            k in stored and _contains(stored[k], v) for k, v in sent.items()
        )
    return bool(stored == sent)


@pytest.mark.parametrize("example", [pytest.param(e, id=f"{e.source}:{e.section}") for e in EXAMPLES])
async def test_example_is_accepted(
    objects: Objects, request: pytest.FixtureRequest, example: Example
) -> None:
    for index, manifest in enumerate(example.manifests()):
        manifest["metadata"]["name"] = unique_name(request, str(index))
        stored = await objects.create(manifest)
        assert _contains(stored["spec"], manifest["spec"]), (stored["spec"], manifest["spec"])
        # What the server stored reads back through the models unchanged.
        assert _MODELS[stored["kind"]].from_dict(stored).to_dict() == stored
