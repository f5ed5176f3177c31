"""The fast constructor of `kubeyaml` builds exactly what the general one builds, or hands over.

`General` below is `KubernetesLoader` without its shortcuts (PyYAML's own `resolve`, the general
`construct_document`); every document must load the same through both, errors included.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from olm.compat import kubeyaml
from unit import realdata


class General(kubeyaml.KubernetesLoader):
    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        resolved: str = yaml.resolver.BaseResolver.resolve(self, kind, value, implicit)  # type: ignore[no-untyped-call]
        return resolved

    def construct_document(self, node: yaml.Node) -> Any:
        self.aliased = False
        document = yaml.constructor.BaseConstructor.construct_document(self, node)
        if self.aliased:
            kubeyaml._check_aliasing(node)
        return document


def load(text: bytes, loader: type[kubeyaml.KubernetesLoader]) -> Any:
    try:
        return ("ok", list(yaml.load_all(text, Loader=loader)))
    except (yaml.YAMLError, ValueError) as error:
        return ("error", type(error).__name__, str(error))


CASES = {
    "plain-scalars": b"a: y\nb: 017\nc: 1.0\nd: ~\ne: 2024-01-02\nf: =\ng: 'x'\nh: \"1\"\ni: .inf\n",
    "explicit-tags": b"a: !!str 1\nb: !!int '7'\nc: !!binary aGk=\nd: !!float 2\ne: !!null ''\n",
    "map-tag-on-a-scalar": b"a: !!map x\n",
    "str-tag-on-a-sequence": b"a: !!str [1]\n",
    "seq-tag-on-a-mapping": b"a: !!seq {b: 1}\n",
    "set-tag": b"a: !!set {x, y}\n",
    "custom-tag": b"a: !thing x\n",
    "merge-key": b"base: &b {a: 1}\nother:\n  <<: *b\n  c: 2\n",
    "alias-of-a-scalar": b"a: &x hello\nb: *x\n",
    "value-key": b"? !!value a\n: 1\n",
    "non-string-keys": b"1: one\ntrue: t\n1.0: f\n~: n\n",
    "sequence-key": b"? [a, b]\n: c\n",
    "duplicate-keys": b"a: 1\na: 2\n",
    "bad-base64": b"a: !!binary 'a'\n",
    "nesting-150-deep": b"a: " + b"[" * 150 + b"]" * 150 + b"\n",
    "nesting-500-deep": b"a: " + b"[" * 500 + b"]" * 500 + b"\n",
    "self-alias": b"a: &a [1, *a]\n",
    "several-documents": b"a: 1\n---\n- x\n---\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_same_result_as_the_general_constructor(text: bytes) -> None:
    assert load(text, kubeyaml.KubernetesLoader) == load(text, General)


def test_same_result_for_the_real_yaml_files() -> None:
    """Bundle manifests and catalog files; the multi-megabyte catalogs are left out for time."""
    files = [p for p in sorted(realdata.require().rglob("*.yaml")) if p.stat().st_size < 256 << 10]
    for path in files:
        text = path.read_bytes()
        assert load(text, kubeyaml.KubernetesLoader) == load(text, General), path


def test_no_path_resolvers_are_registered() -> None:
    """The fast `resolve` skips PyYAML's path resolvers; it is only right while there are none."""
    assert not kubeyaml.KubernetesLoader.yaml_path_resolvers
