"""Benchmarks of olm_runtime."""
