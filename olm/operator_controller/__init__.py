"""The `operator_controller` process."""
