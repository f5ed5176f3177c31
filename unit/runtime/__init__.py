"""Tests of olm_runtime."""
