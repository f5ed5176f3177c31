"""Token providers: rotation of token files and renewal of TokenRequest tokens before expiry."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from olm_runtime.client import CredentialError, FileToken, errors
from olm_runtime.client._identity import REFRESH_FRACTION, ServiceAccountToken
from olm_runtime.clock import FakeClock


def _clock() -> FakeClock:
    """One time line for both clocks a provider reads: monotonic (`now`) and wall (`now` again)."""
    return FakeClock(start=1_000_000.0)


async def test_file_token_is_re_read_after_the_reload_interval(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text("one")
    clock = _clock()
    provider = FileToken(path, reload_after=60, clock=clock)
    assert await provider.token() == "one"
    path.write_text("two")
    clock.advance(59)
    assert await provider.token() == "one"  # cached
    clock.advance(1)
    assert await provider.token() == "two"  # rotated file picked up


async def test_a_missing_token_file_is_a_credential_error(tmp_path: Path) -> None:
    with pytest.raises(CredentialError, match="cannot read token file"):
        await FileToken(tmp_path / "absent").token()


class TokenAPI:
    """Answers TokenRequests with numbered tokens valid for `lifetime` seconds from `clock`."""

    def __init__(self, clock: FakeClock, lifetime: float) -> None:
        self.clock = clock
        self.lifetime = lifetime
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.fail: errors.APIError | None = None

    async def request(self, method: str, path: str, *, body: bytes | None = None, **_: Any) -> bytes:
        assert body is not None
        self.requests.append((path, orjson.loads(body)))
        await asyncio.sleep(0)  # let concurrent callers pile up
        if self.fail:
            raise self.fail
        expiry = datetime.fromtimestamp(self.clock.now() + self.lifetime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return orjson.dumps({"status": {"token": f"t{len(self.requests)}", "expirationTimestamp": expiry}})


async def test_token_request_tokens_are_renewed_at_80_percent_of_their_lifetime() -> None:
    clock = _clock()
    api = TokenAPI(clock, lifetime=1000)
    provider = ServiceAccountToken(
        api, "ns", "installer", audiences=("aud",), expiration_seconds=1000, clock=clock, wall_clock=clock.now
    )
    assert await provider.token() == "t1"
    path, body = api.requests[0]
    assert path == "/api/v1/namespaces/ns/serviceaccounts/installer/token"
    assert body["spec"] == {"expirationSeconds": 1000, "audiences": ["aud"]}

    clock.advance(1000 * REFRESH_FRACTION - 1)
    assert await provider.token() == "t1"
    clock.advance(1)
    assert await provider.token() == "t2"
    assert len(api.requests) == 2


async def test_concurrent_callers_share_one_token_request() -> None:
    clock = _clock()
    api = TokenAPI(clock, lifetime=3600)
    provider = ServiceAccountToken(api, "ns", "sa", clock=clock, wall_clock=clock.now)
    tokens = await asyncio.gather(*(provider.token() for _ in range(10)))
    assert set(tokens) == {"t1"}
    assert len(api.requests) == 1


async def test_invalidate_forces_a_new_token() -> None:
    clock = _clock()
    api = TokenAPI(clock, lifetime=3600)
    provider = ServiceAccountToken(api, "ns", "sa", clock=clock, wall_clock=clock.now)
    await provider.token()
    provider.invalidate()
    assert await provider.token() == "t2"


async def test_a_failed_token_request_is_a_credential_error_naming_the_account() -> None:
    clock = _clock()
    api = TokenAPI(clock, lifetime=3600)
    api.fail = errors.NotFound(404, "NotFound", 'serviceaccounts "sa" not found')
    with pytest.raises(CredentialError, match=r"ServiceAccount ns/sa: serviceaccounts \"sa\" not found"):
        await ServiceAccountToken(api, "ns", "sa", clock=clock, wall_clock=clock.now).token()
