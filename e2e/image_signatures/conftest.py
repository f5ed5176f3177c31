"""Fixtures of the image signature tests: cosign, two key pairs, and a signature policy file.

cosign is the one `olm_testkit.binaries` builds from the Go module proxy; it signs images in the
session's registry with key pairs it generates here (`trusted`, whose public key the policies
name, and `untrusted`, a signer the policies do not know). The processes under test (a catalogd,
an operator-controller) are started by each module with `--signature-policy` naming a file the
module writes. They are processes of this directory alone: it sorts before e2e/operator_controller,
whose session-wide operator-controller starts later, and its ClusterCatalogs carry a scope label
of their own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from olm.process import testing_seams
from olm_runtime.testing.registry import Registry
from olm_testkit.cosign import Cosign, KeyPair

SCOPE_VALUE = "image-signatures"
SCOPE = f"{testing_seams.SCOPE_LABEL}={SCOPE_VALUE}"
LABELS = {testing_seams.SCOPE_LABEL: SCOPE_VALUE}
"""Labels of this directory's ClusterCatalogs (its catalogd reconciles only those)."""


@pytest.fixture(scope="session")
def cosign(test_tool_binaries: Path, registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Cosign:
    return Cosign(test_tool_binaries / "cosign", tmp_path_factory.mktemp("cosign"), registry.ca_file)


@pytest.fixture(scope="session")
def trusted(cosign: Cosign) -> KeyPair:
    return cosign.key_pair("trusted")


@pytest.fixture(scope="session")
def untrusted(cosign: Cosign) -> KeyPair:
    return cosign.key_pair("untrusted")


def sigstore_signed(key: KeyPair, **identity: str) -> list[dict[str, Any]]:
    """A scope's requirements: signed by `key`, with `signedIdentity` `identity` when given."""
    requirement: dict[str, Any] = {"type": "sigstoreSigned", "keyPath": str(key.public)}
    if identity:
        requirement["signedIdentity"] = identity
    return [requirement]


def write_policy(path: Path, docker: dict[str, list[dict[str, Any]]]) -> Path:
    """A policy accepting anything by default, with `docker` scopes; `path`."""
    document = {"default": [{"type": "insecureAcceptAnything"}], "transports": {"docker": docker}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1))
    return path
