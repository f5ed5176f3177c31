"""Top-level pytest configuration: the control-plane fixtures come from the runtime's test kit, and
OLM's own from `olm_testkit.plugin`.

olm-runtime's `pytest11` entry point already registers its plugin under this module's name, so
naming it here adds nothing then; it keeps the fixtures for sessions run with
PYTEST_DISABLE_PLUGIN_AUTOLOAD.
"""

pytest_plugins = ["olm_runtime.testing.pytest_plugin", "olm_testkit.plugin"]
