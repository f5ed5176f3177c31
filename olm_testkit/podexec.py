"""Run a command in a Pod's container through the API server, as `kubectl exec` does: the
`pods/exec` subresource over a WebSocket (`v4.channel.k8s.io`: one byte of channel, then data;
channel 3 carries the final status), the API server relaying to the kubelet, the kubelet to
containerd. For real nodes only: kwok's Pods have no process to run a command in.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass
from urllib.parse import urlencode

import aiohttp

from olm_runtime.testing.controlplane import ControlPlane

_STDOUT, _STDERR, _STATUS = 1, 2, 3


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str


async def run(
    control_plane: ControlPlane, namespace: str, pod: str, command: list[str], *, container: str = ""
) -> Result:
    """`command` run in `pod` (its `container`, or its only one) as the cluster's admin."""
    ca = control_plane.certificate_authority()
    context = ssl.create_default_context(cafile=str(ca.cert_file))
    context.load_cert_chain(str(ca.directory / "admin.crt"), str(ca.directory / "admin.key"))
    query = [("command", word) for word in command] + [("stdout", "true"), ("stderr", "true")]
    if container:
        query.append(("container", container))
    url = f"{control_plane.server}/api/v1/namespaces/{namespace}/pods/{pod}/exec?{urlencode(query)}"
    out: dict[int, bytearray] = {_STDOUT: bytearray(), _STDERR: bytearray(), _STATUS: bytearray()}
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(
            url, protocols=("v4.channel.k8s.io",), ssl=context, timeout=aiohttp.ClientWSTimeout(ws_close=30)
        ) as ws,
    ):
        async for message in ws:
            if message.type == aiohttp.WSMsgType.BINARY and message.data:
                out.setdefault(message.data[0], bytearray()).extend(message.data[1:])
            elif message.type in (aiohttp.WSMsgType.ERROR, aiohttp.WSMsgType.CLOSE):
                break
    return Result(
        exit_code=_exit_code(bytes(out[_STATUS])), stdout=out[_STDOUT].decode(), stderr=out[_STDERR].decode()
    )


def _exit_code(status: bytes) -> int:
    """0 for `Success`; the `ExitCode` cause of a `NonZeroExitCode` failure; else an error."""
    if not status:
        raise RuntimeError("the exec stream ended without a status")
    answer = json.loads(status)
    if answer.get("status") == "Success":
        return 0
    causes = (answer.get("details") or {}).get("causes") or []
    codes = [int(c["message"]) for c in causes if c.get("reason") == "ExitCode"]
    if answer.get("reason") == "NonZeroExitCode" and codes:
        return codes[0]
    raise RuntimeError(f"exec failed: {answer.get('message') or answer}")
