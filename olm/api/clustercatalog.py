"""ClusterCatalog: a File-Based Catalog, published as an OCI image, made available to the cluster.

catalogd resolves `spec.source.image.ref` to a digest, unpacks the image, and serves the catalog
content over HTTPS at `status.urls.base`. operator-controller reads that content to resolve
ClusterExtensions; `spec.priority` breaks ties between catalogs offering the same bundle.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from olm.api import names, rules
from olm.api.base import AGE_COLUMN, Model, PrinterColumn, Resource, ResourceInfo, condition_status_column
from olm.api.markers import INT32, Rule, object_rules
from olm.api.meta import Conditions, ImageRef, PollIntervalMinutes

__all__ = [
    "AvailabilityMode",
    "CatalogSource",
    "CatalogSourceType",
    "CatalogURLs",
    "ClusterCatalog",
    "ClusterCatalogSpec",
    "ClusterCatalogStatus",
    "ImageSource",
    "ResolvedCatalogSource",
    "ResolvedImageSource",
]


class CatalogSourceType(StrEnum):
    """Where catalog content comes from."""

    IMAGE = "Image"


class AvailabilityMode(StrEnum):
    """Whether a catalog's content is offered to clients."""

    AVAILABLE = "Available"
    UNAVAILABLE = "Unavailable"


_IMAGE_UNION = Rule(
    "self.type == 'Image' ? has(self.image) : !has(self.image)",
    "image is required when type is Image, and must not be set otherwise",
)


class ImageSource(Model):
    """An OCI image holding the catalog, and how often to look for a newer one."""

    model_config = object_rules(rules.NO_POLLING_A_DIGEST)

    ref: ImageRef
    """The catalog image: `<domain>/<path>:<tag>` or `<domain>/<path>@<algorithm>:<hex>`.

    The domain is the registry, optionally with a port (`quay.io`, `localhost:5000`). The path
    is one or more lowercase components separated by `/`. A tag (at most 128 characters) follows
    `:` and may move to other content over time; a digest (such as `sha256:` and at least 32
    hexadecimal characters) follows `@` and always names the same content. At most 1000
    characters.
    """
    poll_interval_minutes: PollIntervalMinutes | None = None
    """How often, in minutes, to check whether the tag in `ref` points to new content.

    Only for tag references; when omitted, the image is resolved once and not polled.
    """


class CatalogSource(Model):
    """The source of a catalog; `type` says which of the other fields is set."""

    model_config = object_rules(_IMAGE_UNION)

    type: CatalogSourceType
    """The kind of source. The only value is `Image`, which requires `image`."""
    image: ImageSource | None = None
    """The OCI image source; required when `type` is `Image`, forbidden otherwise."""


class ClusterCatalogSpec(Model):
    """What catalog to make available, and how."""

    source: CatalogSource
    """Where the catalog content comes from."""
    priority: Annotated[int, Field(ge=-(2**31), le=2**31 - 1), INT32] = 0
    """Preference among catalogs offering the same content: higher wins. Negative numbers rank
    below the default of 0."""
    availability_mode: AvailabilityMode = AvailabilityMode.AVAILABLE
    """`Available` (the default) unpacks and serves the content; `Unavailable` stops serving it,
    as if the catalog did not exist, while keeping the object."""


class ResolvedImageSource(Model):
    """The image content was actually read from."""

    ref: Annotated[str, Field(max_length=1000), *rules.RESOLVED_IMAGE_REF_RULES]
    """The digest reference the source resolved to, usable with any OCI tool to fetch the same
    content."""


class ResolvedCatalogSource(Model):
    """The source the served content was unpacked from."""

    model_config = object_rules(_IMAGE_UNION)

    type: CatalogSourceType
    """The kind of source; `Image` sets `image`."""
    image: ResolvedImageSource
    """The resolved image."""


class CatalogURLs(Model):
    """Where clients read the catalog content."""

    base: Annotated[
        str,
        Field(max_length=525),
        Rule("isURL(self)", "base must be a valid URL"),
        Rule(
            "!isURL(self) || url(self).getScheme() in ['http', 'https']",
            "base must use the http or https scheme",
        ),
    ]
    """The cluster-internal URL under which the content endpoints live; append `/api/v1/all` to
    fetch the whole catalog as File-Based Catalog JSON."""


class ClusterCatalogStatus(Model):
    """What catalogd observed and did."""

    conditions: Conditions | None = None
    """`Serving`: whether content is served (True/Available; False/Unavailable before the first
    unpack or after deletion started; False/UserSpecifiedUnavailable when availabilityMode is
    Unavailable). `Progressing`: whether catalogd is moving to a new state (True/Succeeded,
    True/Retrying on errors it will retry, False/Blocked on errors that need a change)."""
    resolved_source: ResolvedCatalogSource | None = None
    """The source the served content was unpacked from."""
    urls: CatalogURLs | None = None
    """Where clients read the content."""
    last_unpacked: datetime | None = None
    """When the content was last unpacked from its source."""


class ClusterCatalog(Resource):
    """A File-Based Catalog made available to the cluster."""

    info: ClassVar[ResourceInfo] = ResourceInfo(
        kind=names.CLUSTER_CATALOG,
        plural="clustercatalogs",
        singular="clustercatalog",
        short_names=("clustercat",),
        printer_columns=(
            PrinterColumn(name="LastUnpacked", json_path=".status.lastUnpacked", type="date"),
            condition_status_column("Serving"),
            AGE_COLUMN,
        ),
    )

    kind: Literal["ClusterCatalog"] = names.CLUSTER_CATALOG
    spec: ClusterCatalogSpec
    """The desired catalog."""
    status: ClusterCatalogStatus | None = None
    """The observed state, written by catalogd."""
