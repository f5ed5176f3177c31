"""One cosign signature checked against a requirement (keys, payload digest, identity), and the
policy file followed as it changes. Fetching signatures from a registry is e2e (`e2e/oci`,
`e2e/catalogd/test_signature_policy.py`)."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import orjson
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from olm import oci
from olm.oci import _identity, _policy, _sigstore

DIGEST = oci.Digest.parse("sha256:" + "c" * 64)
OTHER = "sha256:" + "d" * 64
INTENDED = oci.Reference.parse(f"reg.example/ns/app@{DIGEST}")


def pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def payload(
    digest: str = str(DIGEST), name: str = "reg.example/ns/app", kind: str = _sigstore.PAYLOAD_TYPE
) -> bytes:
    critical = {
        "identity": {"docker-reference": name},
        "image": {"docker-manifest-digest": digest},
        "type": kind,
    }
    return orjson.dumps({"critical": critical, "optional": None})


def signed(key: ec.EllipticCurvePrivateKey, data: bytes) -> _sigstore.Signature:
    return _sigstore.Signature(data, base64.b64encode(key.sign(data, ec.ECDSA(hashes.SHA256()))).decode())


def requirement(
    key: ec.EllipticCurvePrivateKey, identity: _identity.IdentityRule | None = None
) -> _policy.SigstoreSigned:
    return _policy.SigstoreSigned(
        key_paths=(), key_data=(pem(key),), identity=identity or _identity.MatchRepoDigestOrExact()
    )


@pytest.fixture(scope="module")
def trusted() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def check(
    signature: _sigstore.Signature, req: _policy.SigstoreSigned, intended: oci.Reference = INTENDED
) -> str | None:
    return _sigstore.check(signature, _sigstore.load_keys(req), req, intended, DIGEST)


def test_a_signature_by_the_key_for_the_digest_and_repository_is_accepted(
    trusted: ec.EllipticCurvePrivateKey,
) -> None:
    assert check(signed(trusted, payload()), requirement(trusted)) is None


def test_a_signature_by_another_key_is_refused(trusted: ec.EllipticCurvePrivateKey) -> None:
    other = ec.generate_private_key(ec.SECP256R1())
    assert check(signed(other, payload()), requirement(trusted)) == "not signed by a key the policy trusts"


def test_a_changed_payload_no_longer_verifies(trusted: ec.EllipticCurvePrivateKey) -> None:
    signature = signed(trusted, payload())
    tampered = _sigstore.Signature(payload(digest=OTHER), signature.signature)
    assert check(tampered, requirement(trusted)) == "not signed by a key the policy trusts"


def test_a_signature_of_another_digest_is_refused(trusted: ec.EllipticCurvePrivateKey) -> None:
    reason = check(signed(trusted, payload(digest=OTHER)), requirement(trusted))
    assert reason == f"a signature is for manifest digest {OTHER}, not the image's"


def test_a_signature_naming_another_repository_is_refused(trusted: ec.EllipticCurvePrivateKey) -> None:
    reason = check(signed(trusted, payload(name="reg.example/ns/evil")), requirement(trusted))
    assert (
        reason == "a signature names reg.example/ns/evil, which signedIdentity matchRepoDigestOrExact refuses"
    )


def test_a_tag_reference_needs_match_repository_for_cosign_signatures(
    trusted: ec.EllipticCurvePrivateKey,
) -> None:
    by_tag = oci.Reference.parse("reg.example/ns/app:v1")
    signature = signed(trusted, payload())
    assert check(signature, requirement(trusted), by_tag) is not None
    assert check(signature, requirement(trusted, _identity.MatchRepository()), by_tag) is None


def test_a_payload_of_another_type_is_refused(trusted: ec.EllipticCurvePrivateKey) -> None:
    reason = check(signed(trusted, payload(kind="something else")), requirement(trusted))
    assert reason == "a signed payload is not a cosign simple-signing document"


def test_keys_other_than_ecdsa_are_refused_by_name() -> None:
    ed = ed25519.Ed25519PrivateKey.generate().public_key()
    data = ed.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    req = _policy.SigstoreSigned(key_paths=(), key_data=(data,), identity=_identity.MatchRepository())
    with pytest.raises(_sigstore.Refusal, match="not an ECDSA public key"):
        _sigstore.load_keys(req)


def test_a_missing_key_file_is_named(tmp_path: Path) -> None:
    req = _policy.SigstoreSigned(
        key_paths=(tmp_path / "gone.pub",), key_data=(), identity=_identity.MatchRepository()
    )
    with pytest.raises(_sigstore.Refusal, match=f"the key file {tmp_path / 'gone.pub'} cannot be read"):
        _sigstore.load_keys(req)


def test_the_policy_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    followed = oci.SignaturePolicy(path)
    assert followed.current() is None  # no file: accept anything, as upstream

    path.write_bytes(b'{"default": [{"type": "reject"}]}')
    first = followed.current()
    assert first is not None
    assert first.default == (_policy.Reject(),)

    replacement = tmp_path / "new.json"  # the kubelet swaps a symlink: a new inode at the same name
    replacement.write_bytes(b'{"default": [{"type": "insecureAcceptAnything"}]}')
    os.replace(replacement, path)
    second = followed.current()
    assert second is not None
    assert second.default == (_policy.InsecureAcceptAnything(),)

    path.write_bytes(b'{"default": "nope"}')
    with pytest.raises(oci.InvalidSignaturePolicy, match=f"the signature policy {path} is invalid"):
        followed.current()
