"""The command line: flags anywhere, usage errors, help with examples, and exit codes."""

from __future__ import annotations

import argparse
import importlib.metadata
from pathlib import Path

import pytest
import yaml

from olm.cli import main
from olm_runtime.testing.process import free_ports


def parse(*argv: str) -> argparse.Namespace:
    return main.build_parser().parse_args(argv)


def test_global_flags_work_before_and_after_the_command() -> None:
    before = parse("--kubeconfig", "k", "--context", "dev", "catalog", "list")
    after = parse("catalog", "list", "--kubeconfig", "k", "--context", "dev", "-o", "json")
    for args in (before, after):
        assert (args.kubeconfig, args.context, args.system_namespace) == ("k", "dev", "olmv1-system")
    assert after.output == "json"
    assert before.output == "table"


def test_defaults_when_no_global_flag_is_given() -> None:
    args = parse("search", "green")
    assert (args.kubeconfig, args.context, args.catalogd_ca) == (None, None, None)
    assert args.text == "green"


def test_catalog_add_flags() -> None:
    args = parse("catalog", "add", "demo", "r/c:latest", "--poll-interval", "5", "--priority", "-3")
    assert (args.name, args.image, args.poll_interval, args.priority) == ("demo", "r/c:latest", 5, -3)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["catalog"],
        ["catalog", "add", "demo"],
        ["catalog", "add", "demo", "img", "--poll-interval", "0"],
        ["catalog", "list", "-o", "xml"],
        ["catalog", "update", "demo"],
        ["package", "versions"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main.main(argv)
    assert exited.value.code == main.EXIT_USAGE
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("command", [*main.COMMANDS, "catalog", "package"])
def test_every_command_has_help_with_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main.main([*command.split(), "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert "example:\n  olmctl " in text
    assert "--kubeconfig" in text


def test_version_prints_the_installed_version_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"olmctl {importlib.metadata.version('olm-py')}\n"
    # The install and upgrade commands keep their own --version (a version range).
    assert (
        parse("install", "kube-green", "-n", "g", "--service-account", "sa", "--version", "1.x").version
        == "1.x"
    )


def test_listing_and_show_commands_take_an_output_format(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("catalog list", "search", "package show", "package versions"):
        with pytest.raises(SystemExit):
            main.main([*command.split(), "--help"])
        assert "--output {table,json,yaml}" in capsys.readouterr().out


def _kubeconfig(path: Path, server: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "only", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "only",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def test_an_unreachable_api_server_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = f"https://127.0.0.1:{free_ports(1)[0]}"
    kubeconfig = _kubeconfig(tmp_path / "config", server)
    code = main.main(["--kubeconfig", str(kubeconfig), "catalog", "list"])
    err = capsys.readouterr().err
    assert code == main.EXIT_UNREACHABLE
    assert err.startswith(f"error: cannot reach the API server at {server}")
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1


def test_an_unknown_context_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubeconfig = _kubeconfig(tmp_path / "config", "https://127.0.0.1:1")
    code = main.main(["--kubeconfig", str(kubeconfig), "--context", "prod", "catalog", "list"])
    assert code == main.EXIT_FAILED
    assert capsys.readouterr().err == f"error: kubeconfig: context 'prod' not found in {kubeconfig}\n"


def test_kubeconfig_env_is_honoured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = f"https://127.0.0.1:{free_ports(1)[0]}"
    monkeypatch.setenv("KUBECONFIG", str(_kubeconfig(tmp_path / "config", server)))
    assert main.main(["catalog", "list"]) == main.EXIT_UNREACHABLE
    assert server in capsys.readouterr().err
