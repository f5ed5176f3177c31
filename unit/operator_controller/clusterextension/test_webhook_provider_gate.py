"""`--feature-gates=WebhookProviderCertManager=false` reaches the renderer: the controller's plan
sources carry no certificate provider, so a bundle with webhooks is refused (the renderer's refusal:
unit/pipeline/render/test_webhooks.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from olm.operator_controller.clusterextension.options import Options
from olm.operator_controller.clusterextension.state import Context
from olm.operator_controller.clusterextension.steps import Pipeline
from olm.pipeline.render import CertManagerProvider


def _context(options: Options) -> Context:
    # Only the wiring is under test: nothing is called on these.
    unused: Any = SimpleNamespace(list=lambda *_: None, get_package=lambda *_: None)
    return Context(
        client=unused, reader=unused, catalog_client=unused, unpacker=unused, recorder=unused, options=options
    )


@pytest.mark.parametrize(("bundle_webhooks", "provider"), [(True, CertManagerProvider), (False, type(None))])
def test_the_gate_chooses_the_certificate_provider(bundle_webhooks: bool, provider: type) -> None:
    pipeline = Pipeline(_context(Options(bundle_webhooks=bundle_webhooks)))
    assert isinstance(pipeline.sources.certificates, provider)
