"""A throwaway certificate authority for local control planes, registries and webhook servers.

Keys are ECDSA P-256: generating them takes milliseconds, so every control plane gets fresh ones.
Certificates are made by the runtime's own builder (`olm_runtime.manager.certificates`, which also
makes the manager's self-signed serving certificate); this module keeps them in files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from olm_runtime.manager import certificates


@dataclass(frozen=True, kw_only=True)
class KeyPair:
    """PEM files of a certificate and its private key."""

    cert_file: Path
    key_file: Path


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(certificates.key_pem(key))
    path.chmod(0o600)


class CertificateAuthority:
    """A self-signed CA whose files live in `directory` (`ca.crt`, `ca.key`).

    `load_or_create` reuses an existing CA so a restarted component keeps trusting old certificates.
    """

    def __init__(self, *, directory: Path, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate):
        self.directory = directory
        self._key = key
        self._cert = cert

    @property
    def cert_file(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def cert_pem(self) -> bytes:
        return self._cert.public_bytes(serialization.Encoding.PEM)

    @classmethod
    def load_or_create(cls, directory: Path, *, common_name: str = "olm-py local CA") -> CertificateAuthority:
        directory.mkdir(parents=True, exist_ok=True)
        cert_path, key_path = directory / "ca.crt", directory / "ca.key"
        if cert_path.exists() and key_path.exists():
            key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey):
                raise ValueError(f"{key_path} is not an EC private key")
            return cls(
                directory=directory, key=key, cert=x509.load_pem_x509_certificate(cert_path.read_bytes())
            )
        key = certificates.new_key()
        cert = certificates.build(
            certificates.name(common_name), key, ca=True, validity=certificates.VALIDITY * 10
        )
        _write_key(key, key_path)
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cls(directory=directory, key=key, cert=cert)

    def issue(
        self,
        name: str,
        *,
        common_name: str,
        hosts: list[str] | None = None,
        organizations: list[str] | None = None,
        client: bool = False,
    ) -> KeyPair:
        """Issue a certificate as `<name>.crt`/`<name>.key` in the CA's directory.

        With `hosts` it is a serving certificate for those DNS names and IPs; with `client=True` a
        client certificate whose CN and O become the Kubernetes user name and groups.
        """
        key = certificates.new_key()
        cert = certificates.build(
            certificates.name(common_name, organizations or ()),
            key,
            issuer=(self._cert.subject, self._key),
            hosts=hosts or (),
            client=client,
        )
        pair = KeyPair(cert_file=self.directory / f"{name}.crt", key_file=self.directory / f"{name}.key")
        _write_key(key, pair.key_file)
        pair.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return pair


def write_signing_key(private_path: Path, public_path: Path) -> None:
    """Write the ServiceAccount token signing key pair (private key signs, public key verifies)."""
    key = certificates.new_key()
    _write_key(key, private_path)
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
