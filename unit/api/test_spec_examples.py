"""The copies of the spec's v1 examples (used by the e2e tests) match the spec and load cleanly."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

from olm.api import models as api
from olm_testkit.api.specexamples import EXAMPLES, OUR_KINDS, Example, extract

SPEC_DIR = Path(os.environ.get("OLM_SPEC_DIR", Path(__file__).resolve().parents[3] / "shared" / "spec"))
EXAMPLE_PARAMS = [pytest.param(e, id=f"{e.source}:{e.section}") for e in EXAMPLES]
_MODELS = {r.info.kind: r for r in api.RESOURCES}


def _contents(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.skipif(not SPEC_DIR.is_dir(), reason=f"spec directory {SPEC_DIR} not present")
def test_copies_match_every_v1_example_of_the_spec() -> None:
    copies: dict[str, list[list[str]]] = defaultdict(list)
    for example in EXAMPLES:
        copies[example.source].append(_contents(example.text))
    found = {
        page.name: [_contents(block) for block in extract(page.read_text(encoding="utf-8"))]
        for page in sorted(SPEC_DIR.glob("*.md"))
    }
    assert {name: blocks for name, blocks in found.items() if blocks} == dict(copies)


@pytest.mark.parametrize("example", EXAMPLE_PARAMS)
def test_examples_load_as_olm_objects_the_models_accept(example: Example) -> None:
    manifests = example.manifests()
    assert manifests
    for manifest in manifests:
        assert manifest["kind"] in OUR_KINDS
        assert _MODELS[manifest["kind"]].from_dict(manifest).metadata.name


def test_placeholders_and_callouts_are_resolved() -> None:
    (first,) = EXAMPLES[0].manifests()
    assert first["spec"]["source"]["catalog"]["version"] == "1.0.0"
    assert first["spec"]["namespace"] == "namespace-name"
    (channel,) = EXAMPLES[1].manifests()
    assert channel["spec"]["source"]["catalog"]["channels"] == ["latest"]
