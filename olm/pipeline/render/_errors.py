"""The errors rendering raises; each says what to change."""

from __future__ import annotations

__all__ = ["InvalidConfigurationError", "RenderError", "UnsupportedBundleError"]


class RenderError(ValueError):
    """The bundle cannot be rendered (it fails a validator or a generator)."""


class UnsupportedBundleError(RenderError):
    """The bundle uses something OLM v1 does not support (APIServices, no usable install mode, ...)."""


class InvalidConfigurationError(RenderError):
    """The ClusterExtension's configuration does not fit the bundle (`watchNamespace`,
    `deploymentConfig`). Terminal: retrying cannot help until the user changes the configuration;
    the controller reports it with `reason` on the Progressing condition."""

    reason = "InvalidConfiguration"
