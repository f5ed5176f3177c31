"""Benchmarks: figures, not tests."""
