"""Errors of the registry client, one type per decision a caller makes.

Messages are deterministic (no addresses, ports of the client side or timings), so a controller
can put them in a status condition without the condition changing on every retry.
"""

from __future__ import annotations


class RegistryError(Exception):
    """Base of every error raised by `olm.oci`."""

    transient = False
    """Whether retrying later may succeed without anything changing (network trouble, 5xx)."""


class InvalidReference(RegistryError, ValueError):
    """An image reference or digest that does not parse."""


class NotFound(RegistryError):
    """The registry has no such repository, tag, manifest or blob."""


class Unauthorized(RegistryError):
    """The registry refused the credentials we have (or we have none and it wants some)."""


class DigestMismatch(RegistryError):
    """Content did not hash to the digest that named it."""


class SizeMismatch(RegistryError):
    """Content was longer or shorter than its descriptor said."""


class TooLarge(RegistryError):
    """A blob, manifest or layer is bigger than the configured cap."""


class UnsupportedMediaType(RegistryError):
    """A manifest, layer or compression we cannot read."""


class NoMatchingPlatform(RegistryError):
    """An image index has no linux/amd64 image and more than one entry to choose from."""


class TLSVerificationFailed(RegistryError):
    """The registry's certificate is not trusted (or TLS failed otherwise); configure a CA bundle."""


class TransientError(RegistryError):
    """Connection trouble, timeouts, 429 and 5xx answers, after retries ran out."""

    transient = True


class ProtocolError(RegistryError):
    """The registry answered something the distribution API does not allow."""


class SignatureRejected(RegistryError):
    """The signature policy refuses the image; the message names the image, the scope and the rule.
    Worth retrying: a signature pushed or a policy changed later lets the image through."""


class InvalidSignaturePolicy(RegistryError):
    """The signature policy file cannot be read or parsed; every pull fails until it is fixed."""
