"""Making X.509 certificates: one builder for the manager's self-signed serving certificate and the
test kit's throwaway certificate authority (`olm_runtime.testing.pki` builds on it).

Keys are ECDSA P-256: generating one takes milliseconds. `self_signed_context` is what the secure
metrics server serves when it is given no certificate files; scrapers cannot verify it (nothing
signs it), so it protects the bearer token from passive eavesdropping only: give real certificate
files (say, from cert-manager) for more. controller-runtime does the same when its secure metrics
server has no certificate directory.

Imported when a certificate is made, not before: `cryptography` adds ~9 MiB to a process.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import tempfile
from collections.abc import Sequence
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from olm_runtime.manager import tlsprofile

__all__ = ["VALIDITY", "build", "key_pem", "name", "new_key", "self_signed_context"]

VALIDITY = datetime.timedelta(days=365)
"""How long a certificate is valid unless the caller says otherwise."""
_BACKDATE = datetime.timedelta(minutes=5)
"""Valid from a little before now, so a peer whose clock is slightly behind accepts it."""

Key = ec.EllipticCurvePrivateKey


def new_key() -> Key:
    """A fresh ECDSA P-256 private key."""
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: Key) -> bytes:
    """`key` as unencrypted PKCS#8 PEM."""
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def name(common_name: str, organizations: Sequence[str] = ()) -> x509.Name:
    """A subject of a common name and organizations (Kubernetes reads them as user and groups)."""
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    return x509.Name(attributes)


def _alternative_names(hosts: Sequence[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


_CA_KEY_USAGE = x509.KeyUsage(
    digital_signature=True,
    key_cert_sign=True,
    crl_sign=True,
    content_commitment=False,
    key_encipherment=False,
    data_encipherment=False,
    key_agreement=False,
    encipher_only=False,
    decipher_only=False,
)


def build(
    subject: x509.Name,
    key: Key,
    *,
    issuer: tuple[x509.Name, Key] | None = None,
    ca: bool = False,
    hosts: Sequence[str] = (),
    client: bool = False,
    validity: datetime.timedelta = VALIDITY,
) -> x509.Certificate:
    """A certificate of `subject` for `key`'s public key, signed by `issuer` (its name and key), or
    self-signed without one.

    `ca`: a certificate authority (signs certificates, nothing else). Otherwise a leaf: a serving
    certificate for `hosts` (DNS names and IP addresses) when given, a client certificate with
    `client`, or both."""
    signer_name, signer_key = issuer if issuer is not None else (subject, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(signer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + validity)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(_CA_KEY_USAGE, critical=True)
    else:
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else []
        if hosts:
            usages.append(ExtendedKeyUsageOID.SERVER_AUTH)
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if hosts:
        builder = builder.add_extension(_alternative_names(hosts), critical=False)
    return builder.sign(signer_key, hashes.SHA256())


def self_signed_context(tls_profile: tlsprofile.Profile) -> ssl.SSLContext:
    """A server context under `tls_profile` with a fresh key and a one-year self-signed certificate
    for this host name, `localhost` and the loopback addresses. The key never outlives the call on
    disk: Python's `ssl` loads keys from files only, so it is written to a private temporary
    directory that is removed before this returns."""
    key = new_key()
    host = socket.gethostname()
    cert = build(name(f"{host}@metrics"), key, hosts=[host, "localhost", "127.0.0.1", "::1"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls_profile.apply(context)
    with tempfile.TemporaryDirectory(prefix="metrics-cert-") as directory:
        cert_file, key_file = Path(directory) / "tls.crt", Path(directory) / "tls.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key_pem(key))
        context.load_cert_chain(cert_file, key_file)
    return context
