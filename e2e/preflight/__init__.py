"""Preflight checks against the real control plane."""
