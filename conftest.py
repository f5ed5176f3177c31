"""Top-level pytest configuration: the control-plane fixtures come from the runtime's test kit.

olm-runtime's `pytest11` entry point already registers the plugin under this module's name, so this
line adds nothing then; it keeps the fixtures for sessions run with PYTEST_DISABLE_PLUGIN_AUTOLOAD.
"""

pytest_plugins = ["olm_runtime.testing.pytest_plugin"]
