from collections.abc import AsyncIterator

import pytest

from olm_runtime.client import RestConfig, Transport
from unit.runtime.client.stub import Stub, stub

__all__ = ["stub", "transport"]


@pytest.fixture
async def transport(stub: Stub) -> AsyncIterator[Transport]:
    t = await Transport.create(RestConfig(server=stub.url, user_agent="unit-test"))
    try:
        yield t
    finally:
        await t.close()
