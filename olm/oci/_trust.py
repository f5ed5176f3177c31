"""The CAs a registry's certificate is checked against, following their files as they change.

`TrustStore` is the system's trust store plus extra PEM bundles: files named outright and the
`.crt`/`.pem` files of a directory. `context()` returns the `ssl.SSLContext` to connect with, built
again only when the directory's listing or a bundle's stat changes (`Followed`): what a mounted
ConfigMap needs, since the kubelet swaps a `..data` symlink, so the names stay and what they point
at changes.

aiohttp keys pooled connections by their SSL context, so after a change no connection opened with
the old trust is reused: the next request connects, and verifies, with the new one. A bundle that
cannot be loaded makes `context()` raise `TLSVerificationFailed` naming the file, until it is fixed.
"""

from __future__ import annotations

import ssl
from pathlib import Path

from olm.oci._errors import TLSVerificationFailed
from olm.oci._followed import Followed

_SUFFIXES = (".crt", ".pem")


def bundle_files(directory: Path | None) -> tuple[Path, ...]:
    """The `.crt` and `.pem` files of `directory`, sorted; none when it is unset or absent."""
    if directory is None or not directory.is_dir():
        return ()
    return tuple(p for p in sorted(directory.iterdir()) if p.suffix in _SUFFIXES and p.is_file())


def ssl_context(ca_files: tuple[Path, ...]) -> ssl.SSLContext:
    """The system's trust store plus `ca_files`, TLS 1.2 or newer."""
    context = ssl.create_default_context()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    for ca_file in ca_files:
        context.load_verify_locations(cafile=str(ca_file))
    return context


class TrustStore:
    """The system's CAs plus `files` and the bundles in `directory`, re-read when they change."""

    def __init__(self, files: tuple[Path, ...] = (), directory: Path | None = None) -> None:
        self.files = files
        self.directory = directory
        self._followed = Followed(lambda: (*self.files, *bundle_files(self.directory)), _build)

    @property
    def generation(self) -> int:
        """How many contexts were built: 1 after the first `context()`, one more per change."""
        return self._followed.generation

    def context(self) -> ssl.SSLContext:
        """The context for the next connection: the last one built, unless a bundle changed since."""
        return self._followed.current()


def _build(paths: tuple[Path, ...]) -> ssl.SSLContext:
    context = ssl_context(())
    for path in paths:
        try:
            context.load_verify_locations(cafile=str(path))
        except ssl.SSLError as error:
            reason = error.reason or str(error)
            raise TLSVerificationFailed(f"the CA bundle {path} cannot be loaded: {reason}") from None
        except OSError as error:
            reason = error.strerror or str(error)
            raise TLSVerificationFailed(f"the CA bundle {path} cannot be read: {reason}") from None
    return context
