"""Named health and readiness checks, served as `/healthz` and `/readyz` the way Kubernetes components
serve theirs.

A check is `async def check() -> None` that raises, with the reason as the message, when unhealthy.
`GET /readyz` runs every check concurrently and answers 200 `ok` when all pass, 500 listing the
failures otherwise; `?verbose` lists every check (`[+]name ok` / `[-]name failed: reason`) even on
success; `?exclude=name` (repeatable) skips checks; `GET /readyz/<name>` runs one. A check that
takes longer than `CHECK_TIMEOUT` seconds fails with "timed out".
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence

from aiohttp import web

__all__ = ["CHECK_TIMEOUT", "Check", "Checks", "ping"]

Check = Callable[[], Awaitable[None]]
"""`async def check() -> None`, raising with the reason when unhealthy."""

CHECK_TIMEOUT = 5.0
"""Seconds one check may take before it counts as failed."""

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


async def ping() -> None:
    """Always healthy: the process answers HTTP, which is all a liveness probe needs by default."""


class Checks:
    """The checks behind one endpoint (`healthz` or `readyz`)."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self._checks: dict[str, Check] = {}

    @property
    def names(self) -> list[str]:
        return list(self._checks)

    def add(self, name: str, check: Check) -> None:
        """Register `check` as `name` (lower-case letters, digits and dashes; unique per endpoint)."""
        if not _NAME.match(name):
            raise ValueError(f"check name {name!r} must be lower-case letters, digits and dashes")
        if name in self._checks:
            raise ValueError(f"{self.endpoint} check {name!r} is already registered")
        self._checks[name] = check

    async def run(self, names: Iterable[str] | None = None) -> list[tuple[str, str | None]]:
        """Run the named checks (all by default) concurrently: (name, None) for a pass, (name, reason)."""
        selected = list(self._checks) if names is None else list(names)
        reasons = await asyncio.gather(*(self._run_one(self._checks[name]) for name in selected))
        return list(zip(selected, reasons, strict=True))

    @staticmethod
    async def _run_one(check: Check) -> str | None:
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                await check()
        except TimeoutError:
            return f"timed out after {CHECK_TIMEOUT:g}s"
        except Exception as e:
            return str(e) or type(e).__name__
        return None

    def install(self, app: web.Application) -> None:
        """Serve `/<endpoint>` and `/<endpoint>/<name>` on `app`."""
        app.router.add_get(f"/{self.endpoint}", self._serve_all)
        app.router.add_get(f"/{self.endpoint}/{{name}}", self._serve_one)

    async def _serve_all(self, request: web.Request) -> web.Response:
        excluded = set(request.query.getall("exclude", []))
        unknown = excluded - set(self._checks)
        results = await self.run(name for name in self._checks if name not in excluded)
        return self._respond(results, verbose="verbose" in request.query, excluded=sorted(unknown))

    async def _serve_one(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in self._checks:
            return web.Response(status=404, text=f"no {self.endpoint} check named {name!r}\n")
        return self._respond(await self.run([name]), verbose="verbose" in request.query)

    def _respond(
        self, results: list[tuple[str, str | None]], *, verbose: bool, excluded: Sequence[str] = ()
    ) -> web.Response:
        failed = any(reason is not None for _, reason in results)
        status = 500 if failed else 200
        if not failed and not verbose:
            return web.Response(text="ok", status=status)
        lines = [
            f"[+]{name} ok" if reason is None else f"[-]{name} failed: {reason}" for name, reason in results
        ]
        lines += [
            f"warn: some {self.endpoint} checks cannot be excluded: no matches for {name!r}"
            for name in excluded
        ]
        lines.append(f"{self.endpoint} check {'failed' if failed else 'passed'}")
        return web.Response(text="\n".join(lines) + "\n", status=status)
