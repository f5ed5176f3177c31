"""Real `distribution` registries that demand credentials, for the auth e2e tests.

Each one is the same `docker-registry` binary as the shared test registry, serving the same storage
directory (so images pushed to the open registry are readable through it), with one of its two
authentication modes switched on:

- `htpasswd`: HTTP Basic against a bcrypt htpasswd file (hashed with the C library's `crypt`);
- `token`: bearer tokens from a token service, here a small aiohttp app that checks Basic
  credentials and signs ES256 JWTs with a key whose certificate the registry trusts. The registry
  verifies each token (signature, issuer, audience, expiry, granted actions) as it would in
  production; only the token *issuer* is ours.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import os
import socket
import ssl
import time
import uuid
import warnings
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

from olm_runtime.testing import process
from olm_runtime.testing.pki import KeyPair
from olm_runtime.testing.registry import Registry

SERVICE = "olm-e2e-registry"
ISSUER = "olm-e2e-token-issuer"


def bcrypt_hash(password: str) -> str:
    """A bcrypt hash from the C library (`$2b$`), which Go's bcrypt accepts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt  # noqa: PLC0415

    hashed = crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH))
    if not hashed or not hashed.startswith("$2"):
        raise RuntimeError("the C library's crypt cannot make bcrypt hashes")
    return hashed


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class TokenSigner:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def create(cls, directory: Path) -> TokenSigner:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "token-signer")])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256())
        )
        (directory / "token-signer.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cls(key, cert)

    def token(self, subject: str, repository: str, actions: list[str]) -> str:
        chain = [base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()]
        header = {"typ": "JWT", "alg": "ES256", "x5c": chain}
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": subject,
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": [{"type": "repository", "name": repository, "actions": actions}],
        }
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        r, s = decode_dss_signature(self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


@dataclass
class AuthRegistry:
    host: str
    mode: str
    token_requests: int = 0


def _start(base: Registry, directory: Path, auth: Mapping[str, object]) -> tuple[str, int]:
    directory.mkdir(parents=True, exist_ok=True)
    pair = base.options.ca.issue(f"auth-{directory.name}", common_name="registry", hosts=["127.0.0.1"])
    (port,) = process.free_ports(1)
    config = {
        "version": 0.1,
        "log": {"level": "warn", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(base.state_dir / "data")}},
        "http": {
            "addr": f"127.0.0.1:{port}",
            "tls": {"certificate": str(pair.cert_file), "key": str(pair.key_file)},
        },
        "auth": auth,
    }
    (directory / "config.yml").write_text(json.dumps(config))
    log = directory / "registry.log"
    pid = process.spawn(
        ["docker-registry", "serve", str(directory / "config.yml")], log_file=log, tie_to_parent=True
    )
    try:
        process.wait_until(
            lambda: process.port_is_listening(port),
            timeout=30,
            what="the authenticated registry to listen",
            alive=lambda: None if process.is_alive(pid) else _died(log),
        )
    except BaseException:
        process.stop(pid)
        raise
    return f"127.0.0.1:{port}", pid


def _died(log: Path) -> None:
    raise process.ComponentFailure(f"the authenticated registry died:\n{process.log_tail(log)}")


@contextlib.contextmanager
def htpasswd_registry(base: Registry, directory: Path, users: dict[str, str]) -> Iterator[AuthRegistry]:
    """A registry over `base`'s storage that wants HTTP Basic credentials."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "htpasswd").write_text("".join(f"{u}:{bcrypt_hash(p)}\n" for u, p in users.items()))
    host, pid = _start(
        base, directory, {"htpasswd": {"realm": "olm-e2e", "path": str(directory / "htpasswd")}}
    )
    try:
        yield AuthRegistry(host=host, mode="basic")
    finally:
        process.stop(pid)


@contextlib.asynccontextmanager
async def token_registry(
    base: Registry, directory: Path, users: dict[str, str], server_pair: KeyPair
) -> AsyncIterator[AuthRegistry]:
    """A registry over `base`'s storage that wants bearer tokens from a token service we run."""
    os.makedirs(directory, exist_ok=True)
    signer = TokenSigner.create(directory)
    registry = AuthRegistry(host="", mode="bearer")
    expected = {"Basic " + base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in users.items()}

    async def issue(request: web.Request) -> web.Response:
        registry.token_requests += 1
        if request.headers.get("Authorization") not in expected:
            return web.Response(status=401, text="bad credentials")
        scope = request.query.get("scope", "")
        kind, _, rest = scope.partition(":")
        repository, _, actions = rest.rpartition(":")
        granted = [a for a in actions.split(",") if a == "pull"] if kind == "repository" else []
        return web.json_response({"token": signer.token("e2e-user", repository, granted), "expires_in": 300})

    app = web.Application()
    app.router.add_get("/token", issue)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(server_pair.cert_file), str(server_pair.key_file))
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    sockets: Sequence[socket.socket] = getattr(site._server, "sockets", None) or ()
    realm = f"https://127.0.0.1:{sockets[0].getsockname()[1]}/token"
    auth = {
        "token": {
            "realm": realm,
            "service": SERVICE,
            "issuer": ISSUER,
            "rootcertbundle": str(directory / "token-signer.crt"),
        }
    }
    pid = None
    try:
        registry.host, pid = _start(base, directory, auth)
        yield registry
    finally:
        if pid is not None:
            process.stop(pid)
        await runner.cleanup()


# --- the global pull Secret for such a registry ---------------------------------------------------

SECRET = "olm-global-pull-secret"
"""The name the shipped RBAC lets both processes watch (`--global-pull-secret`)."""
USER, PASSWORD = "alice", "correct horse"


def pull_secret(namespace: str, data: dict[str, bytes], *, type: str = "Opaque") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET, "namespace": namespace},
        "type": type,
        "data": {key: base64.b64encode(value).decode() for key, value in data.items()},
    }


def dockerconfigjson(namespace: str, host: str, password: str) -> dict[str, Any]:
    auths = {"auths": {host: {"username": USER, "password": password}}}
    return pull_secret(
        namespace, {".dockerconfigjson": json.dumps(auths).encode()}, type="kubernetes.io/dockerconfigjson"
    )
