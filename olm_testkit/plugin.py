"""OLM's pytest plugin: the fixtures every OLM test suite shares (registered by conftest.py)."""

from __future__ import annotations
