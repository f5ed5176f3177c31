"""cert-manager's chart CRD templates render to plain CRDs, and nothing unexpected renders silently.

The templates here have the shape of the chart's `templates/crd-*.yaml` (controller-gen output
wrapped in four Helm actions). The last test renders the real templates of the pinned release when
its module source is already in the Go module cache (the control-plane build puts it there).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from olm_testkit import binaries

TEMPLATE = """\
{{- if or .Values.crds.enabled .Values.installCRDs }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: "issuers.cert-manager.io"
  {{- if .Values.crds.keep }}
  annotations:
    helm.sh/resource-policy: keep
  {{- end }}
  labels:
    {{- include "cert-manager.crd-labels" . | nindent 4 }}
spec:
  group: cert-manager.io
  names:
    kind: Issuer
    plural: issuers
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
{{- end }}
"""

LABELS = binaries.chart_crd_labels("v1.2.3")


def test_the_chart_template_renders_to_the_crd_with_the_chart_labels() -> None:
    crd = binaries.render_chart_crd(TEMPLATE, labels=LABELS, source="crd-issuers.yaml")
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"] == {"name": "issuers.cert-manager.io", "labels": LABELS}
    assert crd["spec"]["names"]["kind"] == "Issuer"
    assert crd["spec"]["versions"] == [{"name": "v1", "served": True, "storage": True}]


def test_the_labels_name_the_release_and_its_version_but_not_helm() -> None:
    assert LABELS["app.kubernetes.io/version"] == "v1.2.3"
    assert LABELS["app.kubernetes.io/component"] == "crds"
    assert not [key for key in LABELS if "helm" in key or key == "app.kubernetes.io/managed-by"]


def test_annotations_other_than_helms_keep_policy_survive() -> None:
    template = TEMPLATE.replace(
        "    helm.sh/resource-policy: keep\n",
        "    helm.sh/resource-policy: keep\n    example.com/note: kept\n",
    )
    crd = binaries.render_chart_crd(template, labels=LABELS, source="crd-issuers.yaml")
    assert crd["metadata"]["annotations"] == {"example.com/note": "kept"}


@pytest.mark.parametrize(
    ("line", "replacement"),
    [
        pytest.param('  name: "issuers.cert-manager.io"', "  name: {{ .Release.Name }}", id="inline-value"),
        pytest.param("  {{- if .Values.crds.keep }}", "  {{- if .Values.crds.other }}", id="unknown-if"),
        pytest.param(
            "  scope: Namespaced", "  {{- toYaml .Values.extra | nindent 2 }}", id="unknown-include"
        ),
    ],
)
def test_an_unknown_helm_action_fails_the_build_naming_the_line(line: str, replacement: str) -> None:
    template = TEMPLATE.replace(line, replacement)
    number = template.splitlines().index(replacement) + 1
    with pytest.raises(
        binaries.BuildError, match=rf"crd-issuers.yaml:{number}: unexpected Helm template action"
    ):
        binaries.render_chart_crd(template, labels=LABELS, source="crd-issuers.yaml")


def test_a_template_that_is_not_a_crd_fails_the_build() -> None:
    template = TEMPLATE.replace("kind: CustomResourceDefinition", "kind: ConfigMap")
    with pytest.raises(binaries.BuildError, match="does not render to a CustomResourceDefinition"):
        binaries.render_chart_crd(template, labels=LABELS, source="crd-issuers.yaml")


def test_the_cert_manager_target_names_each_binary_and_the_crds_are_an_output() -> None:
    target = binaries.CERT_MANAGER
    assert target.rename
    assert len(target.packages) == len(target.binaries)
    assert target.binaries == ("cert-manager-controller", "cert-manager-cainjector")
    assert target.assets == (binaries.CERT_MANAGER_CRDS_FILE,)
    assert target.write_assets is binaries.write_cert_manager_crds
    assert binaries.CERT_MANAGER_CRDS_FILE in binaries.OUTPUTS
    assert len(set(binaries.OUTPUTS)) == len(binaries.OUTPUTS)
    assert binaries.cert_manager_version().startswith("v1.")


def _cached_chart() -> Path | None:
    """The pinned chart's templates, if the module is in the local cache (no download here)."""
    go = shutil.which("go")
    if go is None:
        return None
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOPROXY": "off"}
    result = subprocess.run(
        [go, "list", "-m", "-f", "{{.Dir}}", binaries.CERT_MANAGER_MODULE],
        cwd=binaries.GOMOD_DIR / "certmanager",
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    directory = Path(result.stdout.strip()) if result.returncode == 0 else None
    if directory is None or not directory.is_dir():
        return None
    return directory


def test_the_pinned_charts_crds_render_to_the_controller_gen_sources() -> None:
    module = _cached_chart()
    if module is None:
        pytest.skip("the pinned cert-manager module is not in the Go module cache")
    for name in binaries.CERT_MANAGER_CRDS:
        template = (module / binaries.CERT_MANAGER_CHART_TEMPLATES / f"crd-{name}.yaml").read_text()
        crd = binaries.render_chart_crd(template, labels=LABELS, source=name)
        source = yaml.safe_load((module / "deploy" / "crds" / f"{name}.yaml").read_text())
        # The chart wraps the generated CRD; its schema must be the generated one, unchanged.
        assert crd["spec"] == source["spec"], name
        assert crd["metadata"]["name"] == source["metadata"]["name"]
