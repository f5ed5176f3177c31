"""`olm.process.startup` without a network: which failures are retried, for how long, and what the error that
ends the process carries. The real processes against a closed port and a wrong CA are in
`e2e/processes/test_unreachable_api_server.py`."""

from __future__ import annotations

import argparse
import ssl
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from olm.catalogd import main as catalogd_main
from olm.operator_controller import main as operator_controller_main
from olm.process import flags, startup
from olm_runtime.client import CredentialError, RestConfig, errors
from olm_runtime.clock import FakeClock

SERVER = "https://10.96.0.1:443"
CONFIG = RestConfig(server=SERVER, ca_file=Path("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"))


def _transport_error(cause: BaseException | None = None) -> errors.TransportError:
    """What `Transport` raises: aiohttp's exception chained under a TransportError."""
    error = errors.TransportError("GET /version: cannot connect")
    error.__cause__ = cause
    return error


def _api_error(kind: type[errors.APIError], status: int) -> errors.APIError:
    return kind(status, kind.__name__, "from the API server")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(TimeoutError("GET /version timed out"), None, id="timeout-retried"),
        pytest.param(_transport_error(ConnectionRefusedError(111, "refused")), None, id="refused-retried"),
        pytest.param(
            _transport_error(ssl.SSLEOFError("EOF in violation of protocol")),
            None,
            id="handshake-cut-retried",
        ),
        pytest.param(
            _transport_error(ssl.SSLCertVerificationError(1, "certificate verify failed")),
            startup.NOT_RETRIED_TLS,
            id="certificate-not-verified-not-retried",
        ),
        pytest.param(
            _transport_error(ssl.SSLError(1, "tlsv13 alert certificate required")),
            startup.NOT_RETRIED_TLS,
            id="handshake-refused-not-retried",
        ),
        pytest.param(_api_error(errors.Unauthorized, 401), startup.NOT_RETRIED_CREDENTIALS, id="401"),
        pytest.param(_api_error(errors.Forbidden, 403), startup.NOT_RETRIED_ANSWER, id="403"),
        pytest.param(_api_error(errors.NotFound, 404), startup.NOT_RETRIED_ANSWER, id="404"),
        pytest.param(_api_error(errors.TooManyRequests, 429), None, id="429-retried"),
        pytest.param(_api_error(errors.InternalError, 500), None, id="500-retried"),
        pytest.param(_api_error(errors.ServiceUnavailable, 503), None, id="503-retried"),
        pytest.param(
            FileNotFoundError(2, "No such file or directory"), startup.NOT_RETRIED_LOCAL, id="no-ca"
        ),
        pytest.param(CredentialError("cannot read token file"), startup.NOT_RETRIED_LOCAL, id="no-token"),
    ],
)
def test_only_failures_that_waiting_can_change_are_retried(error: Exception, expected: str | None) -> None:
    assert startup.not_retried_because(error) == expected


def test_backoff_doubles_and_is_capped() -> None:
    assert [startup.backoff(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def fake_time() -> FakeClock:
    """A clock that only sleeping moves, so retry schedules are exact and instant."""
    return FakeClock(start=1000.0, autojump=True)


class ScriptedRequester:
    """Answers each request with the next outcome: an exception to raise or bytes to return."""

    def __init__(self, outcomes: Iterator[Exception | bytes]) -> None:
        self._outcomes = outcomes
        self.calls: list[tuple[str, str, float | None]] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes:
        self.calls.append((method, path, timeout))
        outcome = next(self._outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _refusing_forever() -> Iterator[Exception | bytes]:
    while True:
        yield _transport_error(ConnectionRefusedError(111, "refused"))


async def test_a_reachable_server_is_asked_once() -> None:
    time = fake_time()
    requester = ScriptedRequester(iter([b'{"major": "1"}']))
    await startup.wait_for_api_server(requester, CONFIG, timeout=30, clock=time)
    assert [(method, path) for method, path, _ in requester.calls] == [("GET", "/version")]
    assert time.sleeps == []


async def test_a_slow_server_is_waited_for() -> None:
    time = fake_time()
    refused = _transport_error(ConnectionRefusedError(111, "refused"))
    requester = ScriptedRequester(iter([refused, TimeoutError("timed out"), refused, b"{}"]))
    await startup.wait_for_api_server(requester, CONFIG, timeout=30, clock=time)
    assert len(requester.calls) == 4
    assert time.sleeps == [0.5, 1.0, 2.0]


async def test_an_unreachable_server_is_given_up_on_at_the_deadline() -> None:
    time = fake_time()
    requester = ScriptedRequester(_refusing_forever())
    with pytest.raises(startup.APIServerUnreachable) as caught:
        await startup.wait_for_api_server(requester, CONFIG, timeout=10, clock=time)
    # 0.5 + 1 + 2 + 4, then the rest up to the deadline, then one last attempt at it.
    assert time.sleeps == [0.5, 1.0, 2.0, 4.0, 2.5]
    assert caught.value.event == "startup.api_server_unreachable"
    assert caught.value.fields == {
        "address": SERVER,
        "ca_file": str(CONFIG.ca_file),
        "cause": "GET /version: cannot connect",
        "attempts": 6,
        "waited_seconds": 10.0,
        "timeout_seconds": 10,
    }


async def test_every_attempt_is_bounded_by_the_time_left_but_gets_a_fair_chance() -> None:
    time = fake_time()
    requester = ScriptedRequester(_refusing_forever())
    with pytest.raises(startup.APIServerUnreachable):
        await startup.wait_for_api_server(requester, CONFIG, timeout=60, clock=time)
    timeouts = [timeout for _, _, timeout in requester.calls]
    assert timeouts[0] == 10.0  # capped: a black-holed address must not eat the whole budget at once
    assert timeouts[-1] == 1.0  # started at the deadline, still long enough to connect on loopback


async def test_a_zero_timeout_asks_once() -> None:
    time = fake_time()
    requester = ScriptedRequester(_refusing_forever())
    with pytest.raises(startup.APIServerUnreachable) as caught:
        await startup.wait_for_api_server(requester, CONFIG, timeout=0, clock=time)
    assert caught.value.fields["attempts"] == 1
    assert time.sleeps == []


@pytest.mark.parametrize(
    ("error", "retry"),
    [
        pytest.param(
            _transport_error(ssl.SSLCertVerificationError(1, "certificate verify failed")),
            startup.NOT_RETRIED_TLS,
            id="wrong-ca",
        ),
        pytest.param(_api_error(errors.Unauthorized, 401), startup.NOT_RETRIED_CREDENTIALS, id="401"),
    ],
)
async def test_a_rejection_ends_the_wait_at_once_and_says_why(error: Exception, retry: str) -> None:
    time = fake_time()
    requester = ScriptedRequester(iter([error]))
    with pytest.raises(startup.APIServerRejected) as caught:
        await startup.wait_for_api_server(requester, CONFIG, timeout=30, clock=time)
    assert time.sleeps == []
    assert caught.value.event == "startup.api_server_rejected"
    assert caught.value.fields["address"] == SERVER
    assert caught.value.fields["cause"] == str(error)
    assert caught.value.fields["retry"] == retry
    assert caught.value.__cause__ is error


async def test_a_missing_kubeconfig_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "kubeconfig"
    with pytest.raises(startup.ConfigUnusable) as caught:
        await startup.load_config(missing)
    assert caught.value.event == "startup.config_unusable"
    assert str(missing) in str(caught.value.fields["cause"])


async def test_an_unreadable_kubeconfig_is_a_config_error(tmp_path: Path) -> None:
    broken = tmp_path / "kubeconfig"
    broken.write_text("clusters: [unclosed")
    with pytest.raises(startup.ConfigUnusable) as caught:
        await startup.load_config(broken)
    assert "not valid YAML" in str(caught.value.fields["cause"])


async def test_no_kubeconfig_outside_a_cluster_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(startup.ConfigUnusable) as caught:
        await startup.load_config(None)
    assert "KUBERNETES_SERVICE_HOST/PORT" in str(caught.value.fields["cause"])


PARSERS = [
    pytest.param(catalogd_main.parser, ["--tls-cert=c", "--tls-key=k"], id="catalogd"),
    pytest.param(operator_controller_main.parser, [], id="operator-controller"),
]


@pytest.mark.parametrize(("make_parser", "required"), PARSERS)
def test_both_processes_take_the_api_server_timeout(
    make_parser: Callable[[], argparse.ArgumentParser], required: list[str]
) -> None:
    parser = make_parser()
    assert parser.parse_args(required).api_server_timeout == startup.DEFAULT_TIMEOUT
    assert parser.parse_args([*required, "--api-server-timeout=2.5"]).api_server_timeout == 2.5


@pytest.mark.parametrize("text", ["-1", "soon", "nan"])
def test_the_timeout_must_be_a_non_negative_number(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        flags.seconds(text)
