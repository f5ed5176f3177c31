"""cosign ("sigstore") image signatures as containers/image reads them: fetch and verify.

cosign's classic layout stores the signatures of the manifest `sha256:HEX` of repository R as an
image tagged `R:sha256-HEX.sig`. Each of its layers of media type
`application/vnd.dev.cosign.simplesigning.v1+json` is one signed payload, and the layer's annotation
`dev.cosignproject.cosign/signature` is the base64 signature over the layer's bytes. The payload is
a JSON "simple signing" document whose `critical.image.docker-manifest-digest` is the signed
manifest digest and whose `critical.identity.docker-reference` is the name it was signed as.

A signature is accepted when one of the policy's public keys verifies it (ECDSA with SHA-256, what
`cosign generate-key-pair` makes), its payload names the image's manifest digest, and its identity
satisfies the requirement's `signedIdentity`. The signature image is read with the same registry
client, credentials and trust as the image; its layers are digest-checked like any blob. Only
key-based verification: no transparency-log or certificate checks (the policy module refuses
requirements that ask for them).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from olm.oci._digest import Digest
from olm.oci._errors import InvalidReference, NotFound
from olm.oci._identity import parse_named
from olm.oci._manifest import ImageManifest
from olm.oci._policy import SigstoreSigned
from olm.oci._reference import Reference

if TYPE_CHECKING:
    from olm.oci._client import RegistryClient

SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
PAYLOAD_TYPE = "cosign container image signature"
_MAX_PAYLOAD_BYTES = 1 << 20
"""Simple-signing payloads are a few hundred bytes; a larger layer is not read."""


class Refusal(Exception):
    """Why a requirement does not accept the image (a fragment of the condition message)."""


@dataclass(frozen=True, slots=True)
class Signature:
    payload: bytes
    signature: str
    """The annotation's base64 text."""


def signature_tag(digest: Digest) -> str:
    return f"{digest.algorithm}-{digest.hex}.sig"


async def fetch(client: RegistryClient, reference: Reference, digest: Digest) -> tuple[Signature, ...]:
    """The simple-signing signatures of `digest` in `reference`'s repository (none when the
    repository has no signature tag for it)."""
    location = Reference(reference.registry, reference.repository, signature_tag(digest), None)
    try:
        # The source that served the signature image (a mirror, when registries.conf names one)
        # serves its layers too, as for the image itself.
        source, _, document = await client._manifest(location)
    except NotFound:
        return ()
    if not isinstance(document, ImageManifest):
        raise Refusal(f"{location} is an image index, not a cosign signature image")
    found = []
    for layer in document.layers:
        annotation = layer.annotations.get(SIGNATURE_ANNOTATION)
        if layer.media_type != SIMPLE_SIGNING or annotation is None:
            continue  # attestations and other artifacts may share the tag
        if layer.size > _MAX_PAYLOAD_BYTES:
            raise Refusal(f"a signature payload in {location} is larger than {_MAX_PAYLOAD_BYTES} bytes")
        path = await client.blob(source or location, layer)
        found.append(Signature(payload=path.read_bytes(), signature=annotation))
    return tuple(found)


def load_keys(requirement: SigstoreSigned) -> tuple[ec.EllipticCurvePublicKey, ...]:
    """The requirement's public keys, read now (a changed key file is used at once)."""
    sources: list[tuple[str, bytes]] = [
        (f"key {i + 1} of keyData(s)", d) for i, d in enumerate(requirement.key_data)
    ]
    for path in requirement.key_paths:
        try:
            sources.append((f"key file {path}", path.read_bytes()))
        except OSError as error:
            raise Refusal(f"the key file {path} cannot be read: {error.strerror or error}") from None
    keys = []
    for what, pem in sources:
        try:
            key = load_pem_public_key(pem)
        except ValueError:
            raise Refusal(f"the {what} is not a PEM public key") from None
        if not isinstance(key, ec.EllipticCurvePublicKey):
            raise Refusal(f"the {what} is not an ECDSA public key (the only kind supported)")
        keys.append(key)
    return tuple(keys)


def check(
    signature: Signature,
    keys: tuple[ec.EllipticCurvePublicKey, ...],
    requirement: SigstoreSigned,
    intended: Reference,
    digest: Digest,
) -> str | None:
    """None when `signature` is accepted for `intended` at `digest`; else why not."""
    try:
        raw = base64.b64decode(signature.signature, validate=True)
    except binascii.Error:
        return "a signature annotation is not base64"
    if not any(_verifies(key, raw, signature.payload) for key in keys):
        return "not signed by a key the policy trusts"
    critical = _critical(signature.payload)
    if critical is None:
        return "a signed payload is not a cosign simple-signing document"
    signed_digest, signed_name = critical
    if signed_digest != str(digest):
        return f"a signature is for manifest digest {signed_digest}, not the image's"
    try:
        signed = parse_named(signed_name)
    except InvalidReference:
        return f"a signature names {signed_name!r}, which is no image reference"
    if not requirement.identity.matches(intended, signed):
        return f"a signature names {signed_name}, which signedIdentity {requirement.identity.name} refuses"
    return None


def _verifies(key: ec.EllipticCurvePublicKey, signature: bytes, payload: bytes) -> bool:
    try:
        key.verify(signature, payload, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def _critical(payload: bytes) -> tuple[str, str] | None:
    """`(docker-manifest-digest, docker-reference)` of a simple-signing payload, or None."""
    try:
        document: Any = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return None
    critical = document.get("critical") if isinstance(document, dict) else None
    if not isinstance(critical, dict) or critical.get("type") != PAYLOAD_TYPE:
        return None
    digest = (critical.get("image") or {}).get("docker-manifest-digest")
    name = (critical.get("identity") or {}).get("docker-reference")
    if not isinstance(digest, str) or not isinstance(name, str):
        return None
    return digest, name
