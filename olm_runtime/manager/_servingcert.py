"""A self-signed serving certificate, made at start when no certificate files are given.

Scrapers cannot verify it (nothing signs it), so it protects the bearer token from passive eavesdropping
only; give real certificate files (say, from cert-manager) for more. controller-runtime does the same
when its secure metrics server has no certificate directory.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import tempfile
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = ["self_signed_context"]

_VALIDITY = datetime.timedelta(days=365)


def self_signed_context(minimum_version: ssl.TLSVersion) -> ssl.SSLContext:
    """A server context with a fresh P-256 key and a one-year certificate for this host name,
    `localhost` and the loopback addresses. The key never outlives the call on disk: Python's `ssl`
    loads keys from files only, so it is written to a private temporary directory that is removed
    before this returns."""
    key = ec.generate_private_key(ec.SECP256R1())
    host = socket.gethostname()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{host}@metrics")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName(host),
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = minimum_version
    with tempfile.TemporaryDirectory(prefix="metrics-cert-") as directory:
        cert_file, key_file = Path(directory) / "tls.crt", Path(directory) / "tls.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        context.load_cert_chain(cert_file, key_file)
    return context
