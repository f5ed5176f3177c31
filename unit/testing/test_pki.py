"""The throwaway CA issues certificates that verify against it, for the names asked for."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from olm_runtime.testing.pki import CertificateAuthority


def test_serving_certificate_has_the_hosts_and_chains_to_the_ca(tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path)
    pair = ca.issue("server", common_name="server", hosts=["127.0.0.1", "localhost"])
    cert = x509.load_pem_x509_certificate(pair.cert_file.read_bytes())
    ca_cert = x509.load_pem_x509_certificate(ca.cert_file.read_bytes())
    cert.verify_directly_issued_by(ca_cert)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_client_certificate_carries_user_and_groups(tmp_path: Path) -> None:
    pair = CertificateAuthority.load_or_create(tmp_path).issue(
        "admin", common_name="admin", organizations=["system:masters"], client=True
    )
    subject = x509.load_pem_x509_certificate(pair.cert_file.read_bytes()).subject
    assert subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "admin"
    assert subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    assert pair.key_file.stat().st_mode & 0o077 == 0


def test_load_or_create_reuses_an_existing_ca(tmp_path: Path) -> None:
    first = CertificateAuthority.load_or_create(tmp_path)
    assert CertificateAuthority.load_or_create(tmp_path).cert_pem == first.cert_pem
