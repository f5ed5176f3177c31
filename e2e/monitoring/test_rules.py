"""The PrometheusRule of `manifests/monitoring` through promtool, built from the module proxy with the
control-plane binaries: `check rules` accepts the rules, and `test rules` (alerts.test.yaml) shows
alerts firing, and not firing, on synthetic series."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from olm_testkit import monitoring

TESTS = Path(__file__).with_name("alerts.test.yaml")


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    """The PrometheusRule's groups as a rules file, with the promtool test file beside it."""
    (tmp_path / "olm.rules.yaml").write_text(monitoring.rules_file())
    shutil.copy(TESTS, tmp_path / TESTS.name)
    return tmp_path


def _promtool(binaries: Path, *args: str, cwd: Path) -> str:
    result = subprocess.run(
        [str(binaries / "promtool"), *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"promtool {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout + result.stderr


def test_promtool_accepts_the_rules(test_tool_binaries: Path, rules: Path) -> None:
    output = _promtool(test_tool_binaries, "check", "rules", "--lint=all", "olm.rules.yaml", cwd=rules)
    alerts = len(monitoring.rule_expressions())
    assert f"SUCCESS: {alerts} rules found" in output


def test_alerts_fire_on_synthetic_series(test_tool_binaries: Path, rules: Path) -> None:
    output = _promtool(test_tool_binaries, "test", "rules", TESTS.name, cwd=rules)
    assert "SUCCESS" in output
