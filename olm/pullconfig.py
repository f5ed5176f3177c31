"""Registry and TLS trust settings both processes read from their flags.

`ca_files(directory)` lists the PEM bundles of a `--*-cas-dir` flag; `keychain_from_secret(client,
"<namespace>/<name>")` reads the `--global-pull-secret` dockerconfigjson Secret into an
`oci.Keychain`. A missing, empty or invalid Secret is logged and pulls go anonymous: a pull secret
that arrives later needs a restart (it is read once at start).
"""

from __future__ import annotations

import base64
from pathlib import Path

from olm import oci
from olm_runtime import logging
from olm_runtime.client import Client, errors, kinds

__all__ = ["ca_files", "keychain_from_secret"]

_log = logging.get_logger("olm.pullconfig")


def ca_files(directory: Path | None) -> tuple[Path, ...]:
    """The `.crt` and `.pem` files of `directory`, sorted; none when it is unset or absent."""
    if directory is None or not directory.is_dir():
        return ()
    return tuple(p for p in sorted(directory.iterdir()) if p.is_file() and p.suffix in (".crt", ".pem"))


async def keychain_from_secret(client: Client, secret: str | None) -> oci.Keychain:
    """Credentials from the dockerconfigjson Secret `<namespace>/<name>`; anonymous when unset."""
    if not secret:
        return oci.Keychain()
    namespace, _, name = secret.rpartition("/")
    if not namespace or not name:
        raise SystemExit(f"--global-pull-secret must be <namespace>/<name>, not {secret!r}")
    try:
        found = await client.get(kinds.SECRET, name, namespace=namespace)
    except errors.NotFound:
        _log.warning("pull_secret.missing", secret=secret)
        return oci.Keychain()
    data = found.get("data") or {}
    raw = data.get(".dockerconfigjson") or data.get(".dockercfg")
    if not raw:
        _log.warning("pull_secret.empty", secret=secret)
        return oci.Keychain()
    try:
        return oci.Keychain.from_dockerconfigjson(base64.b64decode(raw))
    except oci.InvalidPullSecret as error:
        _log.warning("pull_secret.invalid", secret=secret, error=str(error))
        return oci.Keychain()
