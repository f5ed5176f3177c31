"""Reaching the API server at start, or saying in one log line why not.

catalogd and operator-controller can do nothing without their API server, and a traceback from the
first request somewhere deep in a controller tells an operator neither where the process looked nor
why it failed. `olm.process.main.connect` therefore runs these two steps before anything else talks to
the API server:

    config = await startup.load_config(args.kubeconfig)
    async with await Client.connect(config, ...) as client:
        await startup.wait_for_api_server(client.transport, config, timeout=args.api_server_timeout)

and `olm.process.main.main` turns a `StartupError` into one error line (`event` plus `fields`) and exit
code `EXIT_CODE`.

What is promised:

- a configuration that cannot be loaded (no in-cluster environment, an unreadable or invalid
  kubeconfig, a failing exec plugin) raises `ConfigUnusable` at once;
- an API server that does not answer (refused, reset, timed out) or answers 5xx/429 is asked again
  with capped exponential backoff until `timeout` seconds have passed, each failure logged as a
  warning, and then `APIServerUnreachable` names the address, the last cause, attempts and time;
- an answer that waiting cannot change (TLS verification, 401, other 4xx, unreadable CA or token
  files) raises `APIServerRejected` at once, and its `retry` field says why it was not retried.

Condition-style determinism does not apply here: these lines are for the operator, so they carry the
address and port.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from pathlib import Path

from olm_runtime import clock as clocks
from olm_runtime import logging
from olm_runtime.client import ConfigError, CredentialError, RestConfig, errors, transport
from olm_runtime.client import load_config as load_rest_config

__all__ = [
    "DEFAULT_TIMEOUT",
    "EXIT_CODE",
    "NOT_RETRIED_ANSWER",
    "NOT_RETRIED_CREDENTIALS",
    "NOT_RETRIED_LOCAL",
    "NOT_RETRIED_TLS",
    "PROBE_PATH",
    "APIServerRejected",
    "APIServerUnreachable",
    "ConfigUnusable",
    "StartupError",
    "backoff",
    "load_config",
    "not_retried_because",
    "wait_for_api_server",
]

EXIT_CODE = 1
"""The exit code of a process that could not start (anything but 0, and not a signal's 128+n)."""
DEFAULT_TIMEOUT = 30.0
"""Seconds to keep asking an unreachable API server: long enough for a Pod that starts before the
Service's endpoints or the network are ready, short enough that a real outage shows as a restart."""
PROBE_PATH = "/version"
"""Cheap, and readable by any identity the API server authenticates (system:public-info-viewer), so
the answer tests reachability, TLS trust and credentials without depending on RBAC."""

_FIRST_DELAY = 0.5
_MAX_DELAY = 5.0
_MAX_ATTEMPT_TIMEOUT = 10.0
_MIN_ATTEMPT_TIMEOUT = 1.0  # even the last attempt, started at the deadline, gets a fair chance

NOT_RETRIED_TLS = (
    "not retried: TLS with the API server failed (e.g. its certificate does not verify against the "
    "configured CA); that does not change by waiting"
)
NOT_RETRIED_CREDENTIALS = "not retried: the API server does not accept these credentials (401)"
NOT_RETRIED_ANSWER = "not retried: the API server refused the request; asking again gets the same answer"
NOT_RETRIED_LOCAL = (
    "not retried: a local file or credential source (CA bundle, client certificate, token, exec "
    "plugin) cannot be used"
)

_log = logging.get_logger("startup")


class StartupError(Exception):
    """The process cannot start. Log `event` with `fields` as one error line, then exit `EXIT_CODE`."""

    event: str = "startup.failed"

    def __init__(self, *, cause: str, **fields: object) -> None:
        super().__init__(cause)
        self.fields: Mapping[str, object] = {**fields, "cause": cause}
        """The log line's key-value pairs: always `cause`, and `address` once it is known."""


class ConfigUnusable(StartupError):
    """No API server address and identity could be loaded (in-cluster environment, kubeconfig)."""

    event = "startup.config_unusable"


class APIServerUnreachable(StartupError):
    """The API server did not answer usefully within the timeout; every attempt was retryable."""

    event = "startup.api_server_unreachable"


class APIServerRejected(StartupError):
    """The API server (or the local TLS or credential setup) gave an answer waiting cannot change."""

    event = "startup.api_server_rejected"


async def load_config(kubeconfig: str | Path | None) -> RestConfig:
    """`olm_runtime.client.load_config`, with its failures turned into `ConfigUnusable`."""
    try:
        return await load_rest_config(kubeconfig=kubeconfig)
    except (ConfigError, CredentialError) as e:
        # The cause names the file or the missing environment; nothing else is known yet.
        raise ConfigUnusable(cause=str(e)) from e


def backoff(attempt: int) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based): doubling, capped."""
    return min(_FIRST_DELAY * 2.0 ** (attempt - 1), _MAX_DELAY)


def _ssl_error(error: BaseException) -> ssl.SSLError | None:
    """The `ssl.SSLError` somewhere in the chain of `error` (aiohttp wraps and chains them)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def not_retried_because(error: Exception) -> str | None:
    """Why asking again would not help (the log's `retry` field), or None when it might."""
    if isinstance(error, TimeoutError):
        return None
    if isinstance(error, errors.TransportError):
        tls = _ssl_error(error)
        # A connection cut during the handshake is what a restarting server does: worth retrying.
        if tls is None or isinstance(tls, ssl.SSLEOFError | ssl.SSLZeroReturnError):
            return None
        return NOT_RETRIED_TLS
    if isinstance(error, errors.Unauthorized):
        return NOT_RETRIED_CREDENTIALS
    if isinstance(error, errors.APIError):
        return None if error.status >= 500 or error.status == 429 else NOT_RETRIED_ANSWER
    # What is left is local: OSError or ssl.SSLError from loading the CA or client certificate,
    # CredentialError from a token file or exec plugin.
    return NOT_RETRIED_LOCAL


def _describe(error: Exception) -> str:
    return str(error) or type(error).__name__


async def wait_for_api_server(
    requester: transport.Requester,
    config: RestConfig,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    clock: clocks.Clock = clocks.REAL,
) -> None:
    """Return once `GET /version` succeeds; raise `APIServerUnreachable` after `timeout` seconds of
    retryable failures or `APIServerRejected` at the first one that is not (see the module doc).

    `requester` is normally the process client's transport, so the check uses the very connection
    settings the controllers will; `config` is only read for the log (`server`, `ca_file`).
    """
    started = clock.now()
    deadline = started + timeout
    fields: dict[str, object] = {"address": config.server}
    if config.ca_file is not None:
        fields["ca_file"] = str(config.ca_file)
    if config.proxy_url:
        fields["proxy"] = config.proxy_url
    attempt = 0
    while True:
        attempt += 1
        remaining = deadline - clock.now()
        attempt_timeout = min(max(remaining, _MIN_ATTEMPT_TIMEOUT), _MAX_ATTEMPT_TIMEOUT)
        try:
            await requester.request("GET", PROBE_PATH, timeout=attempt_timeout)
        except (errors.APIError, errors.TransportError, OSError, CredentialError) as e:
            cause = _describe(e)
            reason = not_retried_because(e)
            if reason is not None:
                raise APIServerRejected(cause=cause, retry=reason, **fields) from e
            remaining = deadline - clock.now()
            if remaining <= 0:
                raise APIServerUnreachable(
                    cause=cause,
                    attempts=attempt,
                    waited_seconds=round(clock.now() - started, 1),
                    timeout_seconds=timeout,
                    **fields,
                ) from e
            delay = min(backoff(attempt), remaining)
            _log.warning(
                "startup.api_server_waiting", cause=cause, attempt=attempt, retry_in=round(delay, 2), **fields
            )
            await clocks.sleep(clock, delay)
            continue
        if attempt > 1:
            _log.info("startup.api_server_reached", attempts=attempt, **fields)
        return
