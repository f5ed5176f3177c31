"""`--registries-conf` on both processes, and the opt-in component `manifests/registries-conf` that
mounts the file where the flag's default reads it. That the processes pull through the file's
mirrors is proven on a real control plane by `e2e/mirrors/test_registries_conf.py`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from olm import oci
from olm.catalogd import main as catalogd
from olm.operator_controller import main as operator_controller
from olm.process import flags
from olm_testkit.deploy import kustomize

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
PARSERS = [
    pytest.param(catalogd.parser, id="catalogd"),
    pytest.param(operator_controller.parser, id="operator-controller"),
]
REQUIRED = ["--tls-cert=/certs/tls.crt", "--tls-key=/certs/tls.key"]
"""catalogd requires its serving pair; operator-controller takes the same flags."""


@pytest.mark.parametrize("parser", PARSERS)
def test_the_default_is_upstreams_path_and_the_flag_overrides_it(
    parser: Callable[[], argparse.ArgumentParser], tmp_path: Path
) -> None:
    assert parser().parse_args(REQUIRED).registries_conf == oci.DEFAULT_REGISTRIES_CONF
    args = parser().parse_args([*REQUIRED, f"--registries-conf={tmp_path}/r.conf"])
    options = flags.registry_options(args, cache_dir=tmp_path, user_agent="test")
    assert options.registries_conf == tmp_path / "r.conf"


def test_the_component_mounts_the_configmap_where_both_processes_read_it(tmp_path: Path) -> None:
    bases = [MANIFESTS / "catalogd", MANIFESTS / "operator-controller"]
    overlay = kustomize.overlay(bases, (), relative_to=tmp_path, components=[MANIFESTS / "registries-conf"])
    (tmp_path / "kustomization.yaml").write_text(overlay)
    deployments = [o for o in kustomize.build(tmp_path) if o["kind"] == "Deployment"]
    assert len(deployments) == 2
    for deployment in deployments:
        spec = deployment["spec"]["template"]["spec"]
        (volume,) = [v for v in spec["volumes"] if v["name"] == "registries-conf"]
        assert volume["configMap"] == {"name": "olm-registries-conf", "optional": True}
        (mount,) = [m for m in spec["containers"][0]["volumeMounts"] if m["name"] == "registries-conf"]
        assert Path(mount["mountPath"]) == oci.DEFAULT_REGISTRIES_CONF.parent
        assert mount["readOnly"] is True
        assert not any(a.startswith("--registries-conf") for a in spec["containers"][0]["args"])
