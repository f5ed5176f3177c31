"""A real TLS client for tests of TLS profiles: `openssl s_client`, which reports the negotiated
version, cipher suite and key-exchange group (Python's `ssl` client cannot tell the group).

Run as a subprocess of the running event loop, so a server started in the test keeps serving."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import shutil
import subprocess

__all__ = ["Handshake", "handshake"]

_VERSION_FLAGS = {"TLSv1": "-tls1", "TLSv1.1": "-tls1_1", "TLSv1.2": "-tls1_2", "TLSv1.3": "-tls1_3"}
_TEMP_KEY = re.compile(r"^Server Temp Key: (?:ECDH, )?([\w-]+),", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Handshake:
    """What the client saw: the negotiated version, suite and group, or `refused`."""

    version: str | None
    cipher: str | None
    group: str | None
    output: str

    @property
    def refused(self) -> bool:
        return self.version is None

    def negotiated(self) -> tuple[str | None, str | None, str | None]:
        return self.version, self.cipher, self.group


def _field(name: str, output: str) -> str | None:
    found = re.search(rf"^{name}: (\S+)$", output, re.MULTILINE)
    return found.group(1) if found else None


async def handshake(
    port: int, *, version: str | None = None, ciphers: str | None = None, groups: str | None = None
) -> Handshake:
    """Handshake with 127.0.0.1:`port`, offering only `version` (say `TLSv1.2`) when given, the
    OpenSSL cipher string `ciphers` (TLS 1.2 and older) and the colon-separated `groups`."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "these tests need the openssl command line tool"
    args = [openssl, "s_client", "-connect", f"127.0.0.1:{port}", "-brief"]
    if version is not None:
        args.append(_VERSION_FLAGS[version])
    if version in ("TLSv1", "TLSv1.1"):
        # The client's OpenSSL, like the server's, speaks TLS 1.0/1.1 at security level 0 only.
        ciphers = f"{ciphers or 'ALL'}:@SECLEVEL=0"
    if ciphers is not None:
        args += ["-cipher", ciphers]
    if groups is not None:
        args += ["-groups", groups]
    process = await asyncio.create_subprocess_exec(
        *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    raw, _ = await asyncio.wait_for(process.communicate(), 30)
    output = raw.decode()
    if "CONNECTION ESTABLISHED" not in output:
        return Handshake(None, None, None, output)
    temp_key = _TEMP_KEY.search(output)
    return Handshake(
        _field("Protocol version", output),
        _field("Ciphersuite", output),
        temp_key.group(1) if temp_key else None,
        output,
    )
