"""Tests of olm_runtime.workqueue."""
