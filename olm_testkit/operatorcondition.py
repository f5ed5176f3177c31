"""Run `operator-condition` (operator-lib's `conditions` package, see `gomod/operatorcondition`) as
the operator it stands for, from inside one of its Pods.

An operator built with operator-lib finds everything in its Pod: the API server from
`KUBERNETES_SERVICE_HOST`/`_PORT`, its ServiceAccount's token, namespace and the cluster CA under
`/var/run/secrets/kubernetes.io/serviceaccount/`, and its OperatorCondition's name in
`OPERATOR_CONDITION_NAME` (set by OLM). `run_as_operator` gives the program that view without
touching the host's file system: it runs under `unshare --mount` (in a user namespace too when not
root), where a tmpfs is mounted over `/var/run/secrets`, or over the nearest directory above it that
exists (`/run` on most hosts, where `/var/run` links to it, whose other contents the program then
does not see), and the three files are written into it; the mount goes away with the process. No
kubeconfig is in its environment, so the in-cluster config is what it uses, and the token's RBAC is
what the API server checks:

    done = await run_as_operator(
        bin_dir / "operator-condition", "set", "Upgradeable", "False", "Migrating", "busy",
        token=token, namespace="ns", condition_name="my-operator.v1", server=plane.server,
        ca_file=plane.ca_file,
    )
    assert done.returncode == 0, done.stderr
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["SERVICE_ACCOUNT_DIR", "Completed", "run_as_operator"]

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
"""Where client-go's in-cluster config and operator-lib read the Pod's ServiceAccount."""
TIMEOUT_SECONDS = 60.0

# Runs inside the new mount namespace: mount the tmpfs, write the ServiceAccount's files from the
# environment, then exec the program without them in its environment.
_SCRIPT = """set -eu
mount -t tmpfs -o mode=0755,size=1m operator-condition "$OC_MOUNTPOINT"
mkdir -p "$OC_SA_DIR"
printf '%s' "$OC_TOKEN" > "$OC_SA_DIR/token"
printf '%s' "$OC_NAMESPACE" > "$OC_SA_DIR/namespace"
printf '%s' "$OC_CA" > "$OC_SA_DIR/ca.crt"
exec env -u OC_MOUNTPOINT -u OC_SA_DIR -u OC_TOKEN -u OC_NAMESPACE -u OC_CA "$@"
"""


@dataclass(frozen=True)
class Completed:
    """How the program ended: its exit status and its decoded output."""

    returncode: int
    stdout: str
    stderr: str


def _mountpoint() -> Path:
    """Where to mount the tmpfs: `/var/run/secrets` when it exists, else its nearest existing
    ancestor (never `/`), with symbolic links resolved (`/var/run` is `/run` on most hosts)."""
    for candidate in (SERVICE_ACCOUNT_DIR.parents[1], *SERVICE_ACCOUNT_DIR.parents[2:]):
        if candidate.is_dir():
            resolved = Path(os.path.realpath(candidate))
            if resolved == Path("/"):
                break
            return resolved
    raise RuntimeError(f"no directory but / to mount a tmpfs on for {SERVICE_ACCOUNT_DIR}")


def _unshare() -> list[str]:
    if os.geteuid() == 0:
        return ["unshare", "--mount", "--propagation", "private"]
    return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]


async def run_as_operator(
    binary: Path,
    *args: str,
    token: str,
    namespace: str,
    condition_name: str,
    server: str,
    ca_file: Path,
) -> Completed:
    """Run `binary args...` with a Pod's view of the ServiceAccount (`token`, `namespace`, the CA of
    `ca_file`), the API server `server` (https://host:port) as the in-cluster service and
    `OPERATOR_CONDITION_NAME=condition_name`; return its exit status and output. Raises TimeoutError
    (after killing it) when it runs longer than a minute."""
    url = urlsplit(server)
    if url.scheme != "https" or not url.hostname:
        raise ValueError(f"not an https://host:port URL: {server}")
    env = {
        # A Pod's environment: no KUBECONFIG (nor anything else of the host's but PATH).
        "PATH": os.environ.get("PATH", os.defpath),
        "KUBERNETES_SERVICE_HOST": url.hostname,
        "KUBERNETES_SERVICE_PORT": str(url.port or 443),
        "OPERATOR_CONDITION_NAME": condition_name,
        "OC_MOUNTPOINT": str(_mountpoint()),
        "OC_SA_DIR": str(SERVICE_ACCOUNT_DIR),
        "OC_TOKEN": token,
        "OC_NAMESPACE": namespace,
        "OC_CA": await asyncio.to_thread(ca_file.read_text),
    }
    process = await asyncio.create_subprocess_exec(
        *_unshare(),
        "sh",
        "-c",
        _SCRIPT,
        "sh",
        str(binary),
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(process.communicate(), TIMEOUT_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    return Completed(process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))
