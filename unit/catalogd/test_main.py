"""The catalogd command line: flags, defaults, derived URLs and addresses."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm import oci
from olm.catalogd import main


def test_defaults_match_the_manifests() -> None:
    args = main.parser().parse_args(["--tls-cert", "c", "--tls-key", "k"])
    assert args.leader_elect is False
    assert args.catalogs_server_addr == ":8443"
    assert args.webhook_bind_address == ":9443"
    assert args.health_probe_bind_address == ":8081"
    assert args.storage_dir == Path("/var/cache/catalogd")
    assert args.system_namespace == "olmv1-system"


def test_tls_files_are_required() -> None:
    with pytest.raises(SystemExit):
        main.parser().parse_args([])


@pytest.mark.parametrize(
    ("address", "base"),
    [
        pytest.param(
            "catalogd-service.olmv1-system.svc",
            "https://catalogd-service.olmv1-system.svc/catalogs",
            id="host",
        ),
        pytest.param("127.0.0.1:8443", "https://127.0.0.1:8443/catalogs", id="host-port"),
        pytest.param("https://catalogs.example.com/", "https://catalogs.example.com/catalogs", id="url"),
    ],
)
def test_urls_base_prefix(address: str, base: str) -> None:
    assert main._base_url(address) == base


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        pytest.param(":8443", ("0.0.0.0", 8443), id="all-interfaces"),
        pytest.param("127.0.0.1:9443", ("127.0.0.1", 9443), id="loopback"),
        pytest.param("[::1]:8443", ("::1", 8443), id="ipv6"),
    ],
)
def test_bind_addresses(address: str, expected: tuple[str, int]) -> None:
    assert main._split_address(address) == expected


def test_extra_ca_files_are_the_pem_files_of_the_directory(tmp_path: Path) -> None:
    for name in ("b.pem", "a.crt", "notes.txt"):
        (tmp_path / name).write_text("x")
    assert oci.bundle_files(tmp_path) == (tmp_path / "a.crt", tmp_path / "b.pem")
    assert oci.bundle_files(None) == ()
