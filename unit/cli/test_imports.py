"""What olmctl loads, pinned: `--help` and usage errors load the command line alone; each command
loads what it uses and nothing of the others (`olm.cli.commands.Handler`). A heavy import that
creeps back (the HTTP client for `--help`, the install pipeline or pydantic for `status`) fails
here rather than showing as seconds at every invocation (`make bench-olmctl` measures them)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from olm.cli import main

_IGNORED = {"__main__", "cython_runtime"}


def _loaded(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running `code`."""
    probe = f"{code}\nimport sys\nprint('\\n--modules--', *sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(result.stdout.rpartition("--modules--")[2].split())


def _third_party(modules: set[str]) -> set[str]:
    """Top-level names outside the standard library (C-extension internals such as `_cython_*`
    left out: they come with the packages that load them)."""
    tops = {m.split(".")[0] for m in modules}
    return {t for t in tops - set(sys.stdlib_module_names) - _IGNORED if not t.startswith("_")}


def _olm_packages(modules: set[str]) -> set[str]:
    """`olm.<package>` of every loaded module of `olm`."""
    return {".".join(m.split(".")[:2]) for m in modules if m.startswith("olm.")}


def _under(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(f"{p}.") for p in prefixes)}


HELP = """
from olm.cli import main
try:
    main.main({argv!r})
except SystemExit:
    pass
"""

COMMAND_LINE = {
    "olm",
    "olm.api",
    "olm.api.names",
    "olm.cli",
    "olm.cli.main",
    "olm.cli.commands",
    "olm.cli.parsing",
    *(f"{family.__name__}{part}" for family in main.FAMILIES for part in ("", ".parsers")),
}
"""Every module of olm `--help` loads: the parsers of each family, nothing they run."""


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["--help"], id="help"),
        pytest.param(["install", "--help"], id="install-help"),
        pytest.param(["status", "--help"], id="status-help"),
        pytest.param(["catalog"], id="usage-error"),
    ],
)
def test_help_and_usage_errors_load_the_command_line_alone(argv: list[str]) -> None:
    loaded = _loaded(HELP.format(argv=argv))
    assert _third_party(loaded) == {"olm"}
    assert _under(loaded, ("olm",)) == COMMAND_LINE
    # Nor the standard library's heavier modules: each is a tenth of a second on a busy machine.
    assert _under(loaded, ("asyncio", "ssl", "dataclasses", "pathlib", "json", "logging")) == set()


COMMAND = """
from olm.cli import main
main.COMMANDS[{command!r}].load()
import olm.cli.session
"""

CLIENT = {
    "olm",
    "olm_runtime",
    # the API client: aiohttp and what it brings, metrics and the tracing API
    "aiohttp",
    "aiohappyeyeballs",
    "aiosignal",
    "attr",
    "frozenlist",
    "idna",
    "multidict",
    "propcache",
    "yarl",
    "typing_extensions",
    "orjson",
    "prometheus_client",
    "opentelemetry",
}
"""What every command loads: the API client (kubeconfig YAML is read when the command runs)."""
CATALOG_CONTENT = CLIENT | {"yaml", "semantic_version"}
"""Reading catalogs as the resolver does (`olm.fbc`, `olm.pipeline.catalogs`, `olm.semver`)."""

NEVER = (
    "kubernetes_asyncio",
    "cryptography",
    "pytest",
    "olm_testkit",
    "olm_runtime.testing",
    "olm_runtime.manager",
    "opentelemetry.sdk",
    "olm.catalogd",
    "olm.operator_controller",
)
"""What no command loads: the test kits, the manager, the tracing SDK, the processes."""
PLANNING = ("pydantic", "structlog", "olm.pipeline.plan", "olm.pipeline.render", "olm.pipeline.resolve")
"""The install pipeline: only `install`, `upgrade`, `rbac` and `migrate` plan."""


@pytest.mark.parametrize(
    ("command", "third_party", "olm_packages"),
    [
        pytest.param("list", CLIENT, {"olm.api", "olm.cli"}, id="list"),
        pytest.param("status", CLIENT, {"olm.api", "olm.cli"}, id="status"),
        pytest.param("uninstall", CLIENT, {"olm.api", "olm.cli"}, id="uninstall"),
        pytest.param("rollback", CLIENT, {"olm.api", "olm.cli"}, id="rollback"),
        pytest.param("catalog add", CLIENT, {"olm.api", "olm.cli"}, id="catalog-add"),
        pytest.param("catalog update", CLIENT, {"olm.api", "olm.cli"}, id="catalog-update"),
        pytest.param("catalog remove", CLIENT, {"olm.api", "olm.cli"}, id="catalog-remove"),
        *(
            pytest.param(
                command,
                CATALOG_CONTENT,
                {"olm.api", "olm.cli", "olm.compat", "olm.fbc", "olm.oci", "olm.pipeline", "olm.semver"},
                id=command.replace(" ", "-"),
            )
            for command in ("catalog list", "search", "package show", "package versions", "package graph")
        ),
    ],
)
def test_a_command_loads_only_what_it_uses(
    command: str, third_party: set[str], olm_packages: set[str]
) -> None:
    loaded = _loaded(COMMAND.format(command=command))
    assert _third_party(loaded) <= third_party
    assert _olm_packages(loaded) <= olm_packages
    assert _under(loaded, (*NEVER, *PLANNING)) == set()
    # Nothing of the other families' commands.
    family = main.COMMANDS[command].module.rpartition(".")[0]
    others = {h.module for h in main.COMMANDS.values() if not h.module.startswith(f"{family}.")}
    assert loaded & others == set()


@pytest.mark.parametrize("command", ["install", "upgrade", "rbac", "migrate"])
def test_the_commands_that_plan_load_the_pipeline_and_nothing_of_the_processes(command: str) -> None:
    loaded = _loaded(COMMAND.format(command=command))
    assert _under(loaded, ("olm.pipeline.plan",)) != set()
    assert _under(loaded, NEVER) == set()


@pytest.mark.parametrize("command", sorted(main.COMMANDS))
def test_every_command_names_a_function_that_exists(command: str) -> None:
    function = main.COMMANDS[command].load()
    assert callable(function)
    assert function.__module__ == main.COMMANDS[command].module
