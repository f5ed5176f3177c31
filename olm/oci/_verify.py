"""`SignaturePolicy`: the policy file, followed as it changes, checked against every image pulled.

The registry client calls `verify` once an image's digest is resolved and before it fetches the
image's config or any layer (`ClientOptions.verifier`), so a refused image is never downloaded, let
alone unpacked. The file (`/etc/containers/policy.json` by default, the path upstream's
containers/image reads) is re-read when it changes (`Followed`), as when the kubelet updates a
mounted ConfigMap. Like upstream, a missing file means
`insecureAcceptAnything` for everything; a file that does not parse refuses every pull with a
message naming the file and the problem, until it is fixed.

The identity checked is the reference as pulled (tag or digest), as containers/image checks it: the
scope is looked up for it, and `signedIdentity` compares signatures with it. cosign signs the
repository name without a tag, so a tag reference needs `signedIdentity: matchRepository` (or
pulling by digest) under the default `matchRepoDigestOrExact`.

Signatures are read whenever a `sigstoreSigned` requirement applies, without the
`use-sigstore-attachments` opt-in of containers/image's registries.d: the policy asking for them is
the opt-in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from olm.oci._digest import Digest
from olm.oci._errors import InvalidSignaturePolicy, SignatureRejected
from olm.oci._followed import Followed
from olm.oci._policy import (
    InsecureAcceptAnything,
    Policy,
    PolicyFormatError,
    Reject,
    Requirement,
    SigstoreSigned,
    parse_policy,
)
from olm.oci._reference import Reference

if TYPE_CHECKING:
    from olm.oci._client import RegistryClient

__all__ = ["DEFAULT_POLICY_PATH", "SignaturePolicy", "VerifyStatistics"]

DEFAULT_POLICY_PATH = Path("/etc/containers/policy.json")


def _log() -> Any:
    """structlog's logger (olm.oci is a leaf: no olm_runtime import), imported only when a policy is
    in force, as `_sigstore` (and with it `cryptography`) is: olmctl commands that pull without a
    policy load neither (unit/cli/test_imports.py)."""
    import structlog  # noqa: PLC0415

    return structlog.get_logger("olm.oci.signatures")


@dataclass(slots=True)
class VerifyStatistics:
    """How many images were checked, and how many of those were refused (signatures fetched and
    verified only where a `sigstoreSigned` requirement applied)."""

    checked: int = 0
    refused: int = 0
    signatures_verified: int = 0
    """Signatures whose payload and key were checked (accepted or not)."""


class SignaturePolicy:
    """The policy at `path`, re-read when the file changes; a `ClientOptions.verifier`."""

    def __init__(self, path: Path = DEFAULT_POLICY_PATH) -> None:
        self.path = path
        self._followed = Followed(lambda: (path,), _load)
        self._statistics = VerifyStatistics()

    def statistics(self) -> VerifyStatistics:
        return self._statistics

    def current(self) -> Policy | None:
        """The policy in force now; None when the file does not exist (accept anything)."""
        return self._followed.current()

    async def verify(self, client: RegistryClient, reference: Reference, digest: Digest) -> None:
        """Raise `SignatureRejected` unless every requirement of `reference`'s scope accepts the
        image whose manifest is `digest` (`InvalidSignaturePolicy` when the file is broken)."""
        policy = self.current()
        if policy is None:
            return
        self._statistics.checked += 1
        scope, requirements = policy.requirements_for(reference)
        for requirement in requirements:
            why = await self._refusal(client, requirement, reference, digest)
            if why is not None:
                self._statistics.refused += 1
                rule = f"{requirement.name} for {scope}"
                _log().info("signature_policy.refused", image=str(reference), rule=rule, reason=why)
                raise SignatureRejected(f"image {reference} rejected by the signature policy: {rule}: {why}")
        _log().info(
            "signature_policy.accepted",
            image=str(reference),
            digest=str(digest),
            scope=str(scope),
            requirements=[requirement.name for requirement in requirements],
        )

    async def _refusal(
        self, client: RegistryClient, requirement: Requirement, reference: Reference, digest: Digest
    ) -> str | None:
        if isinstance(requirement, InsecureAcceptAnything):
            return None
        if isinstance(requirement, Reject):
            return "images of this scope are rejected"
        if not isinstance(requirement, SigstoreSigned):
            return (
                f"{requirement.what} not supported: only public-key sigstoreSigned signatures can be checked"
            )
        from olm.oci import _sigstore  # noqa: PLC0415 (cryptography only when a signature is checked)

        try:
            keys = _sigstore.load_keys(requirement)
            signatures = await _sigstore.fetch(client, reference, digest)
        except _sigstore.Refusal as refusal:
            return str(refusal)
        if not signatures:
            return f"no signature ({reference.name}:{_sigstore.signature_tag(digest)} does not exist)"
        reasons = set()
        for signature in signatures:
            self._statistics.signatures_verified += 1
            reason = _sigstore.check(signature, keys, requirement, reference, digest)
            if reason is None:
                return None
            reasons.add(reason)
        return f"no signature accepted of {len(signatures)}: {'; '.join(sorted(reasons))}"


def _load(paths: tuple[Path, ...]) -> Policy | None:
    (path,) = paths
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        reason = error.strerror or str(error)
        raise InvalidSignaturePolicy(f"the signature policy {path} cannot be read: {reason}") from None
    try:
        return parse_policy(data)
    except PolicyFormatError as error:
        raise InvalidSignaturePolicy(f"the signature policy {path} is invalid: {error}") from None
