"""Top-level pytest configuration: the control-plane fixtures come from the runtime's test kit."""

pytest_plugins = ["olm_runtime.testing.pytest_plugin"]
