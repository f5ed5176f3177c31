"""The CRD generator: deterministic, structural, complete, and its --check catches stale files."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.crdgen.__main__ import DEFAULT_OUTPUT, main, stale_files
from olm.api import models as api
from olm.api.crdgen.crd import HEADER, crd, render, render_all
from olm.api.crdgen.schema import structural_schema
from olm.api.crdgen.structural import violations

REPO = Path(__file__).resolve().parents[2]
RESOURCES = [pytest.param(r, id=r.info.plural) for r in api.RESOURCES]
GENERATED = (*api.RESOURCES, *api.COMPATIBILITY_RESOURCES)


def _schema(resource: type[api.Resource]) -> dict[str, Any]:
    schema: dict[str, Any] = crd(resource)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _nodes(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _nodes(child, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _nodes(node["items"], f"{path}[]")


def _node(resource: type[api.Resource], path: str) -> dict[str, Any]:
    return dict(_nodes(_schema(resource)))[path]


def _rules(node: dict[str, Any]) -> list[str]:
    return [r["rule"] for r in node.get("x-kubernetes-validations", [])]


def test_checked_in_crds_are_current() -> None:
    assert stale_files(render_all(GENERATED), DEFAULT_OUTPUT) == [], "run `python -m hack.crdgen`"


def test_output_is_identical_across_processes_with_different_hash_seeds() -> None:
    script = (
        "from olm.api.crdgen.crd import render_all; "
        "from olm.api.models import COMPATIBILITY_RESOURCES, RESOURCES; import sys; "
        "sys.stdout.write(''.join(render_all((*RESOURCES, *COMPATIBILITY_RESOURCES)).values()))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert outputs == {"".join(render_all(GENERATED).values())}


@pytest.mark.parametrize("resource", RESOURCES)
def test_files_say_they_are_generated_and_parse_as_one_crd(resource: type[api.Resource]) -> None:
    text = render(resource)
    assert text.startswith(HEADER)
    assert "DO NOT EDIT" in text
    assert list(yaml.safe_load_all(text)) == [crd(resource)]


@pytest.mark.parametrize("resource", RESOURCES)
def test_schema_is_structural(resource: type[api.Resource]) -> None:
    assert violations(_schema(resource)) == []
    text = yaml.safe_dump(_schema(resource))
    for forbidden in ("$ref", "anyOf", "allOf", "oneOf", "nullable", "title", "$defs"):
        assert forbidden not in text


@pytest.mark.parametrize("resource", RESOURCES)
def test_every_field_is_described(resource: type[api.Resource]) -> None:
    undocumented = [
        path
        for path, node in _nodes(_schema(resource))
        if path.count(".") >= 2 and not path.endswith("[]") and not node.get("description")
    ]
    assert undocumented == []


@pytest.mark.parametrize("resource", RESOURCES)
def test_crd_shape(resource: type[api.Resource]) -> None:
    spec = crd(resource)["spec"]
    assert spec["group"] == "olm.operatorframework.io"
    assert spec["scope"] == "Cluster"
    assert spec["names"]["categories"] == ["olm"]
    assert spec["names"]["shortNames"]
    (version,) = spec["versions"]
    assert version["name"] == "v1"
    assert version["served"]
    assert version["storage"]
    assert version["subresources"] == {"status": {}}
    assert version["schema"]["openAPIV3Schema"]["required"] == ["spec"]


PRINTER_COLUMNS = [
    pytest.param(
        api.ClusterExtension,
        ["Installed Bundle", "Version", "Installed", "Progressing", "Age"],
        ["Update", "Held By"],
    ),
    pytest.param(api.ClusterCatalog, ["LastUnpacked", "Serving", "Age"], []),
    pytest.param(api.ClusterObjectSet, ["Available", "Progressing", "Age"], []),
]


@pytest.mark.parametrize(("resource", "columns", "wide"), PRINTER_COLUMNS)
def test_printer_columns(resource: type[api.Resource], columns: list[str], wide: list[str]) -> None:
    """The default columns are upstream's, in upstream's order; ours show with `-o wide` only."""
    printed = crd(resource)["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [c["name"] for c in printed if not c.get("priority")] == columns
    assert [c["name"] for c in printed if c.get("priority") == 1] == wide


LIST_MAPS = [
    pytest.param(api.ClusterExtension, ".status.conditions", "type"),
    pytest.param(api.ClusterExtension, ".status.activeRevisions", "name"),
    pytest.param(api.ClusterExtension, ".status.activeRevisions[].conditions", "type"),
    pytest.param(api.ClusterCatalog, ".status.conditions", "type"),
    pytest.param(api.ClusterObjectSet, ".status.conditions", "type"),
    pytest.param(api.ClusterObjectSet, ".spec.phases", "name"),
    pytest.param(api.ClusterObjectSet, ".status.observedPhases", "name"),
]


@pytest.mark.parametrize(("resource", "path", "key"), LIST_MAPS)
def test_list_maps(resource: type[api.Resource], path: str, key: str) -> None:
    node = _node(resource, path)
    assert node["x-kubernetes-list-type"] == "map"
    assert node["x-kubernetes-list-map-keys"] == [key]
    assert key in node["items"]["required"]


IMMUTABLE = [
    pytest.param(api.ClusterExtension, ".spec.namespace"),
    pytest.param(api.ClusterExtension, ".spec.serviceAccount.name"),
    pytest.param(api.ClusterExtension, ".spec.source.catalog.packageName"),
    pytest.param(api.ClusterObjectSet, ".spec.revision"),
    pytest.param(api.ClusterObjectSet, ".spec.collisionProtection"),
    pytest.param(api.ClusterObjectSet, ".spec.phases"),
    pytest.param(api.ClusterObjectSet, ".status.observedPhases"),
]


@pytest.mark.parametrize(("resource", "path"), IMMUTABLE)
def test_immutable_fields_carry_a_transition_rule(resource: type[api.Resource], path: str) -> None:
    assert "self == oldSelf" in _rules(_node(resource, path))


def test_embedded_objects_keep_unknown_fields() -> None:
    node = _node(api.ClusterObjectSet, ".spec.phases[].objects[].object")
    assert node == {
        "description": node["description"],
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }


def test_inline_config_needs_a_property_and_keeps_unknown_fields() -> None:
    node = _node(api.ClusterExtension, ".spec.config.inline")
    assert node["minProperties"] == 1
    assert node["x-kubernetes-preserve-unknown-fields"] is True


def test_strings_checked_by_cel_have_a_max_length() -> None:
    # Without a bound the API server estimates CEL cost from the 3 MiB request limit and can
    # reject the CRD for exceeding its cost budget.
    for resource in api.RESOURCES:
        for path, node in _nodes(_schema(resource)):
            if node.get("type") == "string" and node.get("x-kubernetes-validations"):
                assert "maxLength" in node or "enum" in node, path


def test_type_rules_and_field_rules_accumulate() -> None:
    # `label` has a field rule; LabelSelector itself has none but is a map-type atomic object.
    node = _node(api.ClusterObjectSet, ".spec.progressionProbes[].selector.label")
    assert node["x-kubernetes-map-type"] == "atomic"
    assert _rules(node) == ["has(self.matchLabels) != has(self.matchExpressions)"]


BROKEN = [
    pytest.param({"type": "object", "properties": {"a": {"$ref": "#/x"}}}, "not allowed", id="ref"),
    pytest.param({"type": "object", "properties": {"a": {"description": "x"}}}, "needs a type", id="no-type"),
    pytest.param({"type": "object", "properties": {"a": {"type": "object"}}}, "pruned", id="empty-object"),
    pytest.param(
        {
            "type": "object",
            "properties": {
                "a": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                }
            },
        },
        "must be required",
        id="optional-map-key",
    ),
    pytest.param(
        {"type": "object", "properties": {"metadata": {"type": "object", "properties": {}}}},
        "metadata",
        id="constrained-metadata",
    ),
]


@pytest.mark.parametrize(("schema", "complaint"), BROKEN)
def test_structural_check_names_the_problem(schema: dict[str, Any], complaint: str) -> None:
    found = violations(schema)
    assert any(complaint in v for v in found), found


def test_nullable_alternatives_of_two_types_are_refused() -> None:
    class Either(api.Model):
        value: int | str

    with pytest.raises(ValueError, match="one type per field"):
        structural_schema(Either)


def test_check_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "crds"
    assert main(["--check", "--output-dir", str(out)]) == 1  # missing
    assert main(["--output-dir", str(out)]) == 0
    assert main(["--check", "--output-dir", str(out)]) == 0

    victim = out / "olm.operatorframework.io_clusterextensions.yaml"
    victim.write_text(victim.read_text() + "# hand edit\n")
    assert main(["--check", "--output-dir", str(out)]) == 1
    assert "olm.operatorframework.io_clusterextensions.yaml" in capsys.readouterr().err

    assert main(["--output-dir", str(out)]) == 0
    (out / "olm.operatorframework.io_leftovers.yaml").write_text("---\n")
    assert main(["--check", "--output-dir", str(out)]) == 1
    assert "leftovers" in capsys.readouterr().err

    assert main(["--output-dir", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(render_all(GENERATED))


def test_the_v0_operator_condition_crd_is_v0s_shape() -> None:
    # operator-lib reads and writes operators.coreos.com/v2; v1 clients of OLM v0 keep working.
    generated = crd(api.OperatorCondition)
    assert generated["metadata"]["name"] == "operatorconditions.operators.coreos.com"
    spec = generated["spec"]
    assert (spec["group"], spec["scope"], spec["names"]["kind"]) == (
        "operators.coreos.com",
        "Namespaced",
        "OperatorCondition",
    )
    assert [(v["name"], v["served"], v["storage"]) for v in spec["versions"]] == [
        ("v2", True, True),
        ("v1", True, False),
    ]
    fields = spec["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert sorted(fields) == ["conditions", "deployments", "overrides", "serviceAccounts"]
    assert fields["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
