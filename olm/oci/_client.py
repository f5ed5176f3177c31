"""The registry client: resolve tags to digests and pull images into the blob cache.

Everything fetched is verified against the digest that named it (and the size its descriptor
gave) before anything else sees it, and every verified blob, manifests included, is kept in the
`BlobCache`. A pull by digest whose content is already cached makes no request at all; a pull by
tag costs one `HEAD` to learn the digest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

import aiohttp
import orjson

from olm.compat import httpproxy
from olm.oci import _manifest, _mirrors
from olm.oci._auth import Keychain
from olm.oci._blobcache import BlobCache
from olm.oci._digest import Digest
from olm.oci._errors import DigestMismatch, InvalidReference, ProtocolError, TooLarge, UnsupportedMediaType
from olm.oci._manifest import Descriptor, ImageIndex, ImageManifest
from olm.oci._reference import Reference
from olm.oci._retry import RetryPolicy
from olm.oci._transport import Statistics, Transport
from olm.oci._trust import TrustStore

_CHUNK = 1 << 16
T = TypeVar("T")
_Found = tuple[Reference | None, Digest, ImageManifest | ImageIndex]
"""A manifest, its digest, and the reference of the source that served it (None: the cache)."""


class Verifier(Protocol):
    """Decides whether an image may be pulled, once its digest is known (`SignaturePolicy`)."""

    async def verify(self, client: RegistryClient, reference: Reference, digest: Digest) -> None:
        """Raise a `RegistryError` to refuse `reference`, whose manifest is `digest`."""


@dataclass(frozen=True, kw_only=True)
class ClientOptions:
    """How the registry client connects, authenticates, retries and caches."""

    cache_dir: Path
    """Where verified blobs are kept (`BlobCache` layout); reused across restarts."""
    ca_files: tuple[Path, ...] = ()
    """Extra CA bundles trusted in addition to the system's."""
    ca_dir: Path | None = None
    """A directory whose `.crt`/`.pem` bundles are trusted too, re-read when they change (`TrustStore`)."""
    keychain: Keychain = field(default_factory=Keychain)
    """Pull credentials by registry; anonymous where it has none. `RegistryClient.use_keychain`
    replaces it while the client runs."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Retries of transient failures (connection errors, 408, 429, 5xx)."""
    max_blob_bytes: int = 2 << 30
    """Largest layer or config accepted."""
    max_manifest_bytes: int = 4 << 20
    """Largest manifest or index accepted (distribution's own limit)."""
    connect_timeout: float = 30.0
    """Seconds to establish a connection (TLS included)."""
    read_timeout: float = 60.0
    """Seconds without receiving any data before a transfer counts as failed."""
    registries_conf: Path | None = None
    """A `registries.conf` whose mirrors, prefix rewrites and blocked registries every pull follows,
    re-read when it changes (`RegistriesConf`); None: pull from the registry an image names."""
    platform: tuple[str, str] = _manifest.DEFAULT_PLATFORM
    """`(os, architecture)` picked from image indexes."""
    user_agent: str = "olm-py"
    proxies: httpproxy.Proxies = field(default_factory=httpproxy.Proxies)
    """The HTTP(S) proxy of each request, token requests included (the processes read
    `HTTPS_PROXY`/`NO_PROXY` from their environment); the default: none, every request direct."""
    trace_configs: tuple[aiohttp.TraceConfig, ...] = ()
    """aiohttp request tracing hooks (OpenTelemetry instrumentation, request counting in tests)."""
    verifier: Verifier | None = None
    """Checks every image `pull` resolves before its config and layers are fetched (the signature
    policy); None pulls anything."""


@dataclass(frozen=True, slots=True)
class PulledImage:
    """An image whose manifest, config and layers are verified and on disk."""

    reference: Reference
    """The canonical reference: the repository at the digest the request resolved to."""
    manifest: ImageManifest
    config: dict[str, Any]
    layers: tuple[tuple[Descriptor, Path], ...]

    @property
    def labels(self) -> dict[str, str]:
        """The image config's labels (`config.Labels`)."""
        labels = (self.config.get("config") or {}).get("Labels") or {}
        return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


class RegistryClient:
    """Use as `async with RegistryClient(options) as client:`; one session for all registries."""

    def __init__(self, options: ClientOptions) -> None:
        self.options = options
        self.cache = BlobCache(options.cache_dir)
        self._session: aiohttp.ClientSession | None = None
        self._transport: Transport | None = None
        self._statistics = Statistics()
        self._keychain = options.keychain
        self.trust = TrustStore(options.ca_files, options.ca_dir)
        """The CAs registries are checked against; every request uses its current context."""
        self.mirrors = _mirrors.RegistriesConf(options.registries_conf)
        """Where each image is pulled from; the file is checked before every pull."""

    async def __aenter__(self) -> RegistryClient:
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.options.connect_timeout, sock_read=self.options.read_timeout
        )
        connector = aiohttp.TCPConnector(limit=16)
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": self.options.user_agent},
            trace_configs=list(self.options.trace_configs),
        )
        self._transport = Transport(
            self._session, self._keychain, self.options.retry, self.trust, self.options.proxies
        )
        self._transport.statistics = self._statistics
        return self

    async def __aexit__(self, *_: type[BaseException] | BaseException | TracebackType | None) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = self._transport = None

    def use_keychain(self, keychain: Keychain) -> None:
        """Pull with `keychain` from the next request on (a created, changed or deleted pull secret)."""
        self._keychain = keychain
        if self._transport is not None:
            self._transport.use_keychain(keychain)

    def statistics(self) -> Statistics:
        """Counters since the client was created (requests by kind, retries, bytes, cache hits)."""
        return self._statistics

    @property
    def _t(self) -> Transport:
        if self._transport is None:
            raise RuntimeError("use the RegistryClient as an async context manager")
        return self._transport

    async def _from_sources(
        self, reference: Reference, verb: str, attempt: Callable[[Reference], Awaitable[T]]
    ) -> T:
        """`attempt` on each source of `reference` (mirrors, then its registry) until one answers."""
        rules = self.mirrors.current()
        return await _mirrors.try_in_order(rules.sources(reference), rules.origin, verb, attempt)

    async def resolve(self, reference: Reference) -> Digest:
        """The digest `reference` names now (no request for a digest reference)."""
        if reference.digest is not None:
            return reference.digest
        return await self._from_sources(reference, "resolving", self._resolve_at)

    async def _resolve_at(self, reference: Reference) -> Digest:
        if reference.digest is not None:
            return reference.digest
        what = f"resolving {reference}"

        async def handle(response: aiohttp.ClientResponse) -> Digest | None:
            header = response.headers.get("Docker-Content-Digest")
            try:
                return Digest.parse(header) if header else None
            except InvalidReference:
                raise ProtocolError(f"{what}: the registry sent an invalid Docker-Content-Digest") from None

        self._statistics.manifest_requests += 1
        digest = await self._t.call(
            "HEAD",
            reference,
            f"manifests/{reference.tag}",
            what,
            handle,
            headers={"Accept": _manifest.ACCEPT},
        )
        if digest is None:  # some registries omit the header on HEAD: fetch and hash instead
            digest, _, _ = await self._fetch_manifest(reference, None)
        return digest

    async def manifest(self, reference: Reference) -> tuple[Digest, ImageManifest | ImageIndex]:
        """The manifest (or index) `reference` names, verified, and its digest."""
        _, digest, document = await self._manifest(reference)
        return digest, document

    async def _manifest(self, reference: Reference, source: Reference | None = None) -> _Found:
        """`manifest` from the cache, else from `source` when given, else from the first source of
        `reference` that has it; and the reference of the source that served it."""
        if reference.digest is not None:
            data = self.cache.read(reference.digest, max_size=self.options.max_manifest_bytes)
            if data is not None:
                return None, reference.digest, _manifest.parse(data, None)
        if source is not None:
            return await self._manifest_at(source)
        return await self._from_sources(reference, "fetching manifest", self._manifest_at)

    async def _manifest_at(self, reference: Reference) -> _Found:
        digest = await self._resolve_at(reference)
        data = self.cache.read(digest, max_size=self.options.max_manifest_bytes)
        if data is None:
            _, data, content_type = await self._fetch_manifest(reference, digest)
        else:
            content_type = None
        return reference, digest, _manifest.parse(data, content_type)

    async def _fetch_manifest(self, reference: Reference, digest: Digest | None) -> tuple[Digest, bytes, str]:
        target = str(digest) if digest is not None else reference.target
        what = f"fetching manifest {reference.name}@{target}" if digest else f"fetching manifest {reference}"
        limit = self.options.max_manifest_bytes

        async def handle(response: aiohttp.ClientResponse) -> tuple[bytes, str, str | None]:
            # `read(n)` returns what is buffered, up to n bytes, not n bytes: read to the end.
            data = bytearray()
            async for chunk in response.content.iter_any():
                data += chunk
                if len(data) > limit:
                    raise TooLarge(f"{what}: the manifest is larger than {limit} bytes")
            return (
                bytes(data),
                response.headers.get("Content-Type", ""),
                response.headers.get("Docker-Content-Digest"),
            )

        self._statistics.manifest_requests += 1
        data, content_type, header = await self._t.call(
            "GET", reference, f"manifests/{target}", what, handle, headers={"Accept": _manifest.ACCEPT}
        )
        if _manifest.bare(content_type) in _manifest.SCHEMA1:
            # Checked before the digest: a registry signs schema 1 manifests as it serves them, so
            # their bytes never hash to the digest, and a mismatch would hide the real problem.
            raise UnsupportedMediaType(
                f"{what}: Docker schema 1 manifests are not supported; push the image with a current tool"
            )
        expected = digest or (Digest.parse(header) if header else Digest.of(data))
        actual = Digest.of(data, expected.algorithm)
        if actual != expected:
            raise DigestMismatch(f"{what}: the manifest hashes to {actual}, expected {expected}")
        self.cache.put(expected, data, max_size=limit)
        return expected, data, content_type

    async def blob(self, reference: Reference, descriptor: Descriptor) -> Path:
        """The verified file of a blob of `reference`'s repository, downloaded unless cached."""
        cached = self.cache.get(descriptor.digest, descriptor.size)
        if cached is not None:
            self._statistics.blob_cache_hits += 1
            return cached
        what = f"fetching blob {reference.name}@{descriptor.digest}"
        if descriptor.size > self.options.max_blob_bytes:
            raise TooLarge(
                f"{what}: {descriptor.size} bytes is over the limit of {self.options.max_blob_bytes}"
            )

        async def handle(response: aiohttp.ClientResponse) -> Path:
            writer = self.cache.writer(
                descriptor.digest, expected_size=descriptor.size, max_size=self.options.max_blob_bytes
            )
            try:
                async for chunk in response.content.iter_chunked(_CHUNK):
                    writer.write(chunk)
                    self._statistics.bytes_downloaded += len(chunk)
            except BaseException:
                writer.abort()
                raise
            return await asyncio.to_thread(writer.commit)

        self._statistics.blob_requests += 1
        return await self._t.call("GET", reference, f"blobs/{descriptor.digest}", what, handle)

    async def pull(self, reference: Reference) -> PulledImage:
        """Resolve, fetch and verify the manifest, config and every layer of an image; the rest of
        the image comes from the source that served its manifest, and is reported under `reference`.
        With a `verifier`, nothing past the manifest is fetched for an image it refuses."""
        source, digest, document = await self._manifest(reference)
        if self.options.verifier is not None:
            await self.options.verifier.verify(self, reference, digest)
        canonical = reference.with_digest(digest)
        if isinstance(document, ImageIndex):
            chosen = document.choose(self.options.platform)
            at = source.with_digest(chosen.digest) if source is not None else None
            found, _, document = await self._manifest(reference.with_digest(chosen.digest), at)
            source = source or found
            if isinstance(document, ImageIndex):
                raise ProtocolError(f"the image index of {canonical} points at another index")

        async def fetch(descriptor: Descriptor) -> Path:
            """From the source of the manifest; when it was cached, the first source that has the
            blob becomes the source of the rest."""
            nonlocal source
            if source is not None or self.cache.get(descriptor.digest, descriptor.size) is not None:
                return await self.blob(source or canonical, descriptor)

            async def attempt(at: Reference) -> tuple[Reference, Path]:
                return at, await self.blob(at, descriptor)

            source, path = await self._from_sources(canonical, "fetching blob", attempt)
            return path

        config_path = await fetch(document.config)
        try:
            config = orjson.loads(config_path.read_bytes())
        except orjson.JSONDecodeError:
            raise ProtocolError(f"the config of {canonical} is not valid JSON") from None
        if not isinstance(config, dict):
            raise ProtocolError(f"the config of {canonical} is not a JSON object")
        layers = [(layer, await fetch(layer)) for layer in document.layers]
        return PulledImage(reference=canonical, manifest=document, config=config, layers=tuple(layers))
