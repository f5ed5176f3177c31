"""One certificate builder: the manager's self-signed serving certificate, and the certificate
authority and leaves the test kit issues with it (`olm_runtime.testing.pki`)."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from olm_runtime.manager import certificates, tlsprofile


async def test_the_self_signed_context_serves_tls_for_this_host_and_loopback() -> None:
    context = certificates.self_signed_context(tlsprofile.MODERN)
    assert context.minimum_version is ssl.TLSVersion.TLSv1_3
    server = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    client = ssl.create_default_context()
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE  # nothing signs it: by design
    async with server:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client)
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        writer.close()
    cert = x509.load_der_x509_certificate(der)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [socket.gethostname(), "localhost"]
    assert san.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_a_leaf_issued_by_a_built_authority_verifies_against_it() -> None:
    ca_key = certificates.new_key()
    ca = certificates.build(certificates.name("a CA"), ca_key, ca=True)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    leaf = certificates.build(
        certificates.name("me", ["team"]),
        certificates.new_key(),
        issuer=(ca.subject, ca_key),
        hosts=["svc.example"],
        client=True,
    )
    leaf.verify_directly_issued_by(ca)
    usages = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]
    assert certificates.key_pem(certificates.new_key()).startswith(b"-----BEGIN PRIVATE KEY-----")
