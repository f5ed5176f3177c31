"""A small served catalog (JSON lines, as catalogd's `api/v1/all` answers) for the CLI's unit tests."""

from __future__ import annotations

import base64
from typing import Any

import orjson


def _bundle(package: str, version: str, *properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema": "olm.bundle",
        "name": f"{package}.v{version}",
        "package": package,
        "image": f"registry.example/{package}-bundle:v{version}",
        "properties": [
            {"type": "olm.package", "value": {"packageName": package, "version": version}},
            *properties,
        ],
    }


CSV_METADATA = {
    "type": "olm.csv.metadata",
    "value": {
        "displayName": "Kube Green",
        "description": "Saves CO2 by putting idle workloads to sleep.",
        "keywords": ["sustainability", "Energy"],
        "installModes": [
            {"type": "OwnNamespace", "supported": True},
            {"type": "SingleNamespace", "supported": True},
            {"type": "MultiNamespace", "supported": False},
            {"type": "AllNamespaces", "supported": True},
        ],
    },
}

_CSV = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {"name": "cat-facts.v1.0.0"},
    "spec": {"displayName": "Cat Facts", "description": "Facts about cats.", "keywords": ["feline"]},
}
BUNDLE_OBJECT = {
    "type": "olm.bundle.object",
    "value": {"data": base64.b64encode(orjson.dumps(_CSV)).decode()},
}

METAS: list[dict[str, Any]] = [
    {"schema": "olm.package", "name": "kube-green", "defaultChannel": "alpha", "description": "package text"},
    _bundle("kube-green", "0.5.0"),
    _bundle("kube-green", "0.6.0"),
    _bundle(
        "kube-green",
        "0.7.1",
        CSV_METADATA,
        {"type": "olm.gvk", "value": {"group": "kube-green.com", "version": "v1alpha1", "kind": "SleepInfo"}},
    ),
    {
        "schema": "olm.channel",
        "name": "alpha",
        "package": "kube-green",
        "entries": [
            {"name": "kube-green.v0.5.0"},
            {"name": "kube-green.v0.7.1", "replaces": "kube-green.v0.6.0", "skipRange": "<0.7.0"},
            {"name": "kube-green.v0.6.0", "replaces": "kube-green.v0.5.0"},
        ],
    },
    {
        "schema": "olm.channel",
        "name": "old",
        "package": "kube-green",
        "entries": [{"name": "kube-green.v0.5.0"}],
    },
    {
        "schema": "olm.deprecations",
        "package": "kube-green",
        "entries": [
            {"reference": {"schema": "olm.channel", "name": "old"}, "message": "use alpha"},
            {"reference": {"schema": "olm.bundle", "name": "kube-green.v0.5.0"}, "message": "too old"},
        ],
    },
    {"schema": "olm.package", "name": "cat-facts", "defaultChannel": "stable"},
    _bundle("cat-facts", "1.0.0", BUNDLE_OBJECT),
    {
        "schema": "olm.channel",
        "name": "stable",
        "package": "cat-facts",
        "entries": [{"name": "cat-facts.v1.0.0"}],
    },
    {"schema": "example.other", "name": "ignored"},
]

BODY = b"\n".join(orjson.dumps(m) for m in METAS) + b"\n"
