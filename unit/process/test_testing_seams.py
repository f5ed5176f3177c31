"""The testing seams are off unless enabled, refuse what they do not understand, and never ship on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from olm.api.kinds import CLUSTER_EXTENSION
from olm.catalogd import main as catalogd_main
from olm.operator_controller import main as operator_controller_main
from olm.process import flags, testing_seams
from olm.process.testing_seams import SeamError, Seams
from olm_runtime import cache

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


def test_no_variable_means_production_behaviour() -> None:
    seams = Seams.from_environ({"PATH": "/usr/bin", "OLM_OTHER": "1"})
    assert seams == testing_seams.OFF
    assert seams.enabled() == {}
    assert seams.crash_after_secrets is False
    assert seams.deadline_minute_seconds == 60.0
    assert seams.poll_minute_seconds == 60.0
    assert seams.scope_selector == ""


def test_each_variable_enables_its_seam() -> None:
    seams = Seams.from_environ(
        {
            testing_seams.CRASH_AFTER_SECRETS: "1",
            testing_seams.DEADLINE_MINUTE_SECONDS: "0.3",
            testing_seams.POLL_MINUTE_SECONDS: "1",
            testing_seams.SCOPE_SELECTOR: f"!{testing_seams.SCOPE_LABEL}",
        }
    )
    assert seams.enabled() == {
        "crash_after_secrets": True,
        "deadline_minute_seconds": 0.3,
        "poll_minute_seconds": 1.0,
        "scope_selector": "!olm-py.io/test-scope",
    }


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (testing_seams.CRASH_AFTER_SECRETS, "yes", "must be 0 or 1"),
        (testing_seams.DEADLINE_MINUTE_SECONDS, "soon", "must be a number of seconds"),
        (testing_seams.DEADLINE_MINUTE_SECONDS, "0", "must be a positive number"),
        (testing_seams.POLL_MINUTE_SECONDS, "-1", "must be a positive number"),
        (testing_seams.POLL_MINUTE_SECONDS, "inf", "must be a positive number"),
        (testing_seams.SCOPE_SELECTOR, "a b", "is not a label selector"),
        ("OLM_TESTING_CRASH_AFTER_SECRET", "1", "unknown testing variable"),
    ],
)
def test_a_value_that_does_not_parse_or_an_unknown_variable_is_refused(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(SeamError, match=message):
        Seams.from_environ({variable: value})


def _containers(document: dict[str, Any]) -> list[dict[str, Any]]:
    pod = document["spec"]["template"]["spec"]
    return [*pod.get("containers", []), *pod.get("initContainers", [])]


def test_no_shipped_manifest_sets_a_testing_variable() -> None:
    deployments = 0
    for path in sorted(MANIFESTS.rglob("*.yaml")):
        text = path.read_text()
        assert testing_seams.PREFIX not in text, f"{path} mentions {testing_seams.PREFIX}"
        for document in yaml.safe_load_all(text):
            if not isinstance(document, dict) or document.get("kind") != "Deployment":
                continue
            deployments += 1
            for container in _containers(document):
                names = [env["name"] for env in container.get("env", [])]
                assert not [n for n in names if n.startswith(testing_seams.PREFIX)], path
                args = " ".join(str(a) for a in [*container.get("command", []), *container.get("args", [])])
                assert "testing" not in args, f"{path}: {args}"
    assert deployments == 2, "both Deployments were read"


@pytest.mark.parametrize("main", [catalogd_main.main, operator_controller_main.main])
def test_a_process_with_a_bad_testing_variable_exits_before_connecting(
    main: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(testing_seams.POLL_MINUTE_SECONDS, "never")
    argv = ["--tls-cert", "c", "--tls-key", "k"] if main is catalogd_main.main else []
    assert main(argv) == 1  # type: ignore[operator]


def test_the_scope_narrows_the_cache_of_the_reconciled_kinds_only() -> None:
    args = flags.parse(operator_controller_main.parser(), [])
    scoped = flags.manager_options(args, scoped=(CLUSTER_EXTENSION,), scope_selector="!a/b")
    assert scoped.cache.by_kind == {CLUSTER_EXTENSION: cache.KindOptions(label_selector="!a/b")}
    unscoped = flags.manager_options(args, scoped=(CLUSTER_EXTENSION,))
    assert unscoped.cache.by_kind == {}
