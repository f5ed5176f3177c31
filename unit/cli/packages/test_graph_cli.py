"""`olmctl package graph` on the command line: its flags, defaults and usage errors."""

from __future__ import annotations

import pytest

from olm.cli import main


def test_graph_flags_and_defaults() -> None:
    args = main.build_parser().parse_args(["package", "graph", "infinispan"])
    assert (args.command, args.package, args.output) == ("package graph", "infinispan", "svg")
    assert (args.channel, args.catalog, args.extension) == (None, None, None)
    assert args.command in main.COMMANDS
    full = main.build_parser().parse_args(
        ["package", "graph", "p", "--channel", "stable", "--catalog", "c", "--extension", "e", "-o", "dot"]
    )
    assert (full.channel, full.catalog, full.extension, full.output) == ("stable", "c", "e", "dot")


def test_an_output_format_other_than_svg_or_dot_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main.main(["package", "graph", "p", "-o", "png"])
    assert exited.value.code == main.EXIT_USAGE
    assert "invalid choice: 'png'" in capsys.readouterr().err


def test_help_shows_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main.main(["package", "graph", "--help"])
    assert "example:\n  olmctl package graph infinispan --channel stable" in capsys.readouterr().out
