"""cosign, built from the Go module proxy (`binaries.COSIGN`), signing images in the local registry.

`Cosign.key_pair(name)` runs `cosign generate-key-pair` (an empty password, as `COSIGN_PASSWORD=`
gives) and `Cosign.sign(key, ref)` runs `cosign sign` with that key on an image by digest: no
transparency log upload and no prompt, so nothing leaves the machine. cosign v2 pushes the
signature as the classic `<repository>:sha256-<hex>.sig` image, which is what the signature policy
reads. cosign trusts the registry through `SSL_CERT_FILE` (the session registry's CA) and keeps its
state (`TUF_ROOT`, `HOME`) under the work directory.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path


class CosignError(RuntimeError):
    """cosign exited non-zero; the message holds its output."""


@dataclass(frozen=True)
class KeyPair:
    private: Path
    public: Path


@dataclass(frozen=True)
class Cosign:
    binary: Path
    workdir: Path
    ca_file: Path
    """The CA that signs the registry's certificate."""

    def _run(self, *args: str) -> str:
        self.workdir.mkdir(parents=True, exist_ok=True)
        environment = {
            **os.environ,
            "COSIGN_PASSWORD": "",
            "SSL_CERT_FILE": str(self.ca_file),
            "HOME": str(self.workdir),
            "TUF_ROOT": str(self.workdir / "tuf"),
        }
        result = subprocess.run(
            [str(self.binary), *args],
            cwd=self.workdir,
            env=environment,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if result.returncode != 0:
            raise CosignError(
                f"cosign {' '.join(args)} failed ({result.returncode}):\n{result.stderr[-3000:]}"
            )
        return result.stdout

    def key_pair(self, name: str) -> KeyPair:
        """A new ECDSA P-256 key pair: `<workdir>/<name>.key` and `<workdir>/<name>.pub`."""
        self._run("generate-key-pair", f"--output-key-prefix={name}")
        return KeyPair(private=self.workdir / f"{name}.key", public=self.workdir / f"{name}.pub")

    def sign(self, key: KeyPair, digest_ref: str) -> None:
        """Sign `digest_ref` (`host/repository@sha256:...`) and push the signature to its registry."""
        if "@" not in digest_ref:
            raise ValueError(f"sign images by digest, not {digest_ref!r}")
        self._run("sign", f"--key={key.private}", "--tlog-upload=false", "--yes", digest_ref)
