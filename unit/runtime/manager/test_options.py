"""Options carry controller-runtime's defaults and refuse combinations that cannot work."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from olm_runtime.manager import (
    LeaderElectionOptions,
    ManagerOptions,
    SecureMetricsOptions,
    WebhookOptions,
    options,
    tlsprofile,
)
from olm_runtime.manager._http import parse_bind_address
from olm_runtime.manager.certwatcher import ServingCertificate
from olm_runtime.manager.webhook import DEFAULT_CERT_DIR


def test_defaults_match_controller_runtime() -> None:
    defaults = ManagerOptions()
    assert defaults.leader_election is None
    assert defaults.metrics_bind_address == ":8080"
    assert defaults.health_probe_bind_address == "0"
    assert defaults.graceful_shutdown_timeout == 30.0
    assert defaults.cache_sync_timeout == 120.0
    election = LeaderElectionOptions(lease_name="x")
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (15.0, 10.0, 2.0)
    assert election.release_on_cancel
    webhook = WebhookOptions()
    assert webhook.port == 9443
    assert (webhook.cert_file, webhook.key_file) == (
        DEFAULT_CERT_DIR / "tls.crt",
        DEFAULT_CERT_DIR / "tls.key",
    )
    assert webhook.tls_profile is tlsprofile.INTERMEDIATE


def test_options_are_frozen_and_keyword_only() -> None:
    with pytest.raises(TypeError):
        ManagerOptions(None)  # type: ignore[call-arg]  # positional on purpose: the options are keyword-only
    with pytest.raises(AttributeError):
        ManagerOptions().metrics_bind_address = "0"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"lease_name": ""}, "lease_name", id="no-lease-name"),
        pytest.param({"lease_name": "x", "renew_deadline": 15.0}, "lease_duration", id="renew-reaches-lease"),
        pytest.param({"lease_name": "x", "retry_period": 9.0}, "retry_period", id="retry-too-long-for-renew"),
        pytest.param({"lease_name": "x", "retry_period": 0.0}, "positive", id="retry-zero"),
    ],
)
def test_leader_election_options_reject(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LeaderElectionOptions(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"metrics_bind_address": "8080"}, id="port-without-colon"),
        pytest.param({"health_probe_bind_address": "localhost:http"}, id="named-port"),
        pytest.param({"graceful_shutdown_timeout": -1.0}, id="negative-grace"),
        pytest.param({"cache_sync_timeout": 0.0}, id="zero-sync-timeout"),
    ],
)
def test_manager_options_reject(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        ManagerOptions(**kwargs)  # type: ignore[arg-type]


def test_the_webhook_server_always_has_a_certificate_directory() -> None:
    with pytest.raises(ValueError, match="needs a cert_dir"):
        WebhookOptions(cert_dir=None)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(WebhookOptions, id="webhook"),
        pytest.param(SecureMetricsOptions, id="secure-metrics"),
    ],
)
def test_both_tls_servers_take_the_one_serving_certificate_type(options: type[ServingCertificate]) -> None:
    """Each certificate field exists once, in `ServingCertificate`, with the same keyword, default and
    checks for every TLS server; the servers add their own fields only."""
    assert issubclass(options, ServingCertificate)
    shared = {f.name for f in dataclasses.fields(ServingCertificate)}
    assert shared == {"cert_dir", "cert_name", "key_name", "tls_profile", "cert_poll_interval"}
    custom = options(cert_dir=Path("/certs"), cert_name="c.pem", key_name="k.pem", cert_poll_interval=1.0)
    assert (custom.cert_file, custom.key_file) == (Path("/certs/c.pem"), Path("/certs/k.pem"))
    watcher = custom.watcher()
    assert (watcher.cert_file, watcher.key_file) == (Path("/certs/c.pem"), Path("/certs/k.pem"))
    with pytest.raises(ValueError, match="positive"):
        options(cert_poll_interval=0)


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        pytest.param(":8080", (None, 8080), id="every-interface"),
        pytest.param("127.0.0.1:9000", ("127.0.0.1", 9000), id="ipv4"),
        pytest.param("[::1]:9000", ("::1", 9000), id="ipv6"),
        pytest.param("0", None, id="zero-disables"),
        pytest.param("", None, id="empty-disables"),
        pytest.param("127.0.0.1:0", ("127.0.0.1", 0), id="any-free-port"),
    ],
)
def test_bind_addresses(address: str, parsed: tuple[str | None, int] | None) -> None:
    assert parse_bind_address(address) == parsed


def test_the_lease_namespace_defaults_to_the_pods_namespace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    election = LeaderElectionOptions(lease_name="x")
    monkeypatch.setattr(options, "SERVICE_ACCOUNT_NAMESPACE_FILE", tmp_path / "namespace")
    with pytest.raises(ValueError, match="needs a namespace"):
        election.resolved_namespace()
    (tmp_path / "namespace").write_text("olmv1-system\n")
    assert election.resolved_namespace() == "olmv1-system"
    assert LeaderElectionOptions(lease_name="x", namespace="mine").resolved_namespace() == "mine"


def test_the_default_identity_is_hostname_underscore_uuid() -> None:
    first, second = options.default_identity(), options.default_identity()
    assert re.fullmatch(r".+_[0-9a-f-]{36}", first)
    assert first != second
