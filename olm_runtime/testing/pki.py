"""A throwaway certificate authority for local control planes, registries and webhook servers.

Keys are ECDSA P-256: generating them takes milliseconds, so every control plane gets fresh ones.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = datetime.timedelta(days=365)


@dataclass(frozen=True, kw_only=True)
class KeyPair:
    """PEM files of a certificate and its private key."""

    cert_file: Path
    key_file: Path


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _san(hosts: list[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


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
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY * 10)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
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
        key = ec.generate_private_key(ec.SECP256R1())
        attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations or []]
        now = datetime.datetime.now(datetime.UTC)
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        if hosts:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(attributes))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        )
        if hosts:
            builder = builder.add_extension(_san(hosts), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        pair = KeyPair(cert_file=self.directory / f"{name}.crt", key_file=self.directory / f"{name}.key")
        _write_key(key, pair.key_file)
        pair.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return pair


def write_signing_key(private_path: Path, public_path: Path) -> None:
    """Write the ServiceAccount token signing key pair (private key signs, public key verifies)."""
    key = ec.generate_private_key(ec.SECP256R1())
    _write_key(key, private_path)
    public_path.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
