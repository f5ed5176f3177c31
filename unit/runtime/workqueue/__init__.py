"""Tests of olm_runtime.workqueue and olm_runtime.metrics."""
