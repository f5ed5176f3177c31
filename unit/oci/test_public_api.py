"""The public surface of olm.oci is pinned, and it stays a leaf."""

from __future__ import annotations

import ast
from pathlib import Path

from olm import oci


def test_oci_exports_exactly_these_names() -> None:
    assert sorted(oci.__all__) == sorted(
        [
            "ACCEPT",
            "parse_policy",
            "VerifyStatistics",
            "Verifier",
            "SignatureRejected",
            "SignaturePolicy",
            "Scope",
            "Policy",
            "InvalidSignaturePolicy",
            "DEFAULT_POLICY_PATH",
            "proxy_failure",
            "DOCKER_CONFIG",
            "DOCKER_MANIFEST",
            "DOCKER_MANIFEST_LIST",
            "LAYER_MEDIA_TYPES",
            "OCI_CONFIG",
            "OCI_INDEX",
            "OCI_MANIFEST",
            "DEFAULT_REGISTRIES_CONF",
            "BlobCache",
            "BlobWriter",
            "Blocked",
            "Challenge",
            "ClientOptions",
            "CorruptLayer",
            "Credentials",
            "Descriptor",
            "Digest",
            "DigestMismatch",
            "EmptySelection",
            "ExtractOptions",
            "ExtractStatistics",
            "ImageIndex",
            "ImageManifest",
            "InvalidPullSecret",
            "InvalidRegistriesConf",
            "InvalidReference",
            "Keychain",
            "NoMatchingPlatform",
            "NotFound",
            "ProtocolError",
            "PulledImage",
            "Reference",
            "RegistriesConf",
            "RegistryClient",
            "RegistryError",
            "RetryPolicy",
            "SizeMismatch",
            "Statistics",
            "TLSVerificationFailed",
            "TooLarge",
            "TransientError",
            "TrustStore",
            "Unauthorized",
            "UnsafeContent",
            "UnsupportedMediaType",
            "apply_layers",
            "bundle_files",
            "open_layer",
            "parse_challenges",
            "parse_manifest",
            "parse_registries_conf",
            "ssl_context",
            "unpack_into",
            "unpacked_path",
            "zstd_available",
        ]
    )
    for name in oci.__all__:
        assert getattr(oci, name) is not None


def test_every_error_is_a_registry_error() -> None:
    errors = [getattr(oci, name) for name in oci.__all__ if isinstance(getattr(oci, name), type)]
    errors = [e for e in errors if issubclass(e, Exception) and e is not oci.InvalidPullSecret]
    assert errors
    assert all(issubclass(e, oci.RegistryError) for e in errors)


def test_oci_imports_no_process() -> None:
    for path in Path(oci.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("olm.catalogd", "olm.operator_controller", "olm.cli")), (
                    path
                )
                assert not node.module.startswith("olm_runtime"), path
