"""Push and pull images with the distribution HTTP API (blobs: monolithic upload; manifests by tag)."""

from __future__ import annotations

import http.client
import ssl
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from olm_testkit.images.layout import MANIFEST_MEDIA_TYPE, Blob, Image, sha256_digest


class RegistryError(RuntimeError):
    pass


@dataclass(frozen=True, kw_only=True)
class Reference:
    """`host:port/repository[:tag|@digest]`."""

    host: str
    repository: str
    tag: str | None = None
    digest: str | None = None

    @classmethod
    def parse(cls, ref: str) -> Reference:
        host, _, rest = ref.partition("/")
        if not rest:
            raise ValueError(f"{ref!r} has no registry host")
        if "@" in rest:
            repository, _, digest = rest.partition("@")
            return cls(host=host, repository=repository, digest=digest)
        repository, _, tag = rest.rpartition(":") if ":" in rest else (rest, "", "latest")
        return cls(host=host, repository=repository, tag=tag)

    def __str__(self) -> str:
        suffix = f"@{self.digest}" if self.digest else f":{self.tag}"
        return f"{self.host}/{self.repository}{suffix}"


@dataclass(frozen=True, kw_only=True)
class RegistryClient:
    host: str
    ca_file: Path
    timeout: float = 60.0

    def _request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        hostname, _, port = self.host.partition(":")
        context = ssl.create_default_context(cafile=str(self.ca_file))
        connection = http.client.HTTPSConnection(
            hostname, int(port or 443), timeout=self.timeout, context=context
        )
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        finally:
            connection.close()

    def push_blob(self, repository: str, blob: Blob) -> None:
        status, _, _ = self._request("HEAD", f"/v2/{repository}/blobs/{blob.digest}")
        if status == 200:
            return
        status, headers, body = self._request("POST", f"/v2/{repository}/blobs/uploads/", b"")
        if status != 202:
            raise RegistryError(f"starting an upload to {repository}: HTTP {status} {body[:300]!r}")
        location = urlsplit(headers["location"])
        separator = "&" if location.query else ""
        path = f"{location.path}?{location.query}{separator}{urlencode({'digest': blob.digest})}"
        status, _, body = self._request(
            "PUT",
            path,
            blob.data,
            {"Content-Type": "application/octet-stream", "Content-Length": str(len(blob.data))},
        )
        if status != 201:
            raise RegistryError(f"uploading {blob.digest} to {repository}: HTTP {status} {body[:300]!r}")

    def push(self, image: Image, reference: Reference) -> str:
        """Push every blob, then the manifest under the reference's tag; return the manifest digest."""
        for blob in (*image.layers, image.config):
            self.push_blob(reference.repository, blob)
        target = reference.tag or image.digest
        status, headers, body = self._request(
            "PUT",
            f"/v2/{reference.repository}/manifests/{target}",
            image.manifest,
            {"Content-Type": MANIFEST_MEDIA_TYPE},
        )
        if status != 201:
            raise RegistryError(f"pushing the manifest of {reference}: HTTP {status} {body[:300]!r}")
        digest = headers.get("docker-content-digest", image.digest)
        if digest != image.digest:
            raise RegistryError(f"the registry stored {reference} as {digest}, expected {image.digest}")
        return digest

    def manifest(self, repository: str, reference: str) -> bytes:
        status, _, body = self._request(
            "GET", f"/v2/{repository}/manifests/{reference}", headers={"Accept": MANIFEST_MEDIA_TYPE}
        )
        if status != 200:
            raise RegistryError(f"fetching manifest {repository}:{reference}: HTTP {status}")
        return body

    def delete_manifest(self, repository: str, digest: str) -> None:
        """Delete the manifest `digest` and so every tag naming it (the registry deletes by digest)."""
        status, _, body = self._request("DELETE", f"/v2/{repository}/manifests/{digest}")
        if status != 202:
            raise RegistryError(f"deleting manifest {repository}@{digest}: HTTP {status} {body[:300]!r}")

    def blob(self, repository: str, digest: str) -> bytes:
        status, _, body = self._request("GET", f"/v2/{repository}/blobs/{digest}")
        if status != 200:
            raise RegistryError(f"fetching blob {repository}@{digest}: HTTP {status}")
        if sha256_digest(body) != digest:
            raise RegistryError(f"blob {repository}@{digest} does not match its digest")
        return body

    def tag(self, repository: str, source: str, new_tag: str) -> str:
        """Give the manifest `source` (a tag or digest) a second tag; return the manifest digest."""
        manifest = self.manifest(repository, source)
        status, headers, body = self._request(
            "PUT",
            f"/v2/{repository}/manifests/{new_tag}",
            manifest,
            {"Content-Type": MANIFEST_MEDIA_TYPE},
        )
        if status != 201:
            raise RegistryError(f"tagging {repository}:{source} as {new_tag}: HTTP {status} {body[:300]!r}")
        return headers.get("docker-content-digest", sha256_digest(manifest))
