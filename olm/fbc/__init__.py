"""File-Based Catalogs: read a catalog directory as a stream of metas, view them typed, validate them.

The model: a catalog is a directory of files, each a stream of JSON objects or YAML documents,
in any layout (`.indexignore` files exclude paths, gitignore style). Every object is a *meta*:
its `schema`, `package` and `name`, plus the whole object as compact JSON (`Meta.blob`) and its
origin (file and line). OLM interprets four schemas (`olm.package`, `olm.channel`, `olm.bundle`,
`olm.deprecations`, see `view`); any other schema is carried along untouched.

Promises:

- Streaming. `iter_metas` walks files in lexical order and yields one meta at a time; the memory
  it needs follows the largest single object, never the catalog. `checked` validates on the way
  through, keeping only names, and raises `InvalidCatalog` after the last meta when a rule broke.
- Errors name the place. `ParseError` carries the file and line; each `Problem` of an
  `InvalidCatalog` names the file, line and object (schema, package, name).
- YAML means what it means to Kubernetes (a bare `=` is a string, timestamps stay strings, ...);
  see `olm.compat.kubeyaml` for the list of differences from PyYAML's safe loader.
- Nothing here imports the catalogd or operator-controller processes: this is a shared leaf.
"""

from olm.compat.kubeyaml import KubernetesLoader
from olm.fbc._errors import CatalogError, InvalidCatalog, ParseError, Problem, ShapeError
from olm.fbc._meta import SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE, Meta, Origin
from olm.fbc._model import (
    PROPERTY_BUNDLE_OBJECT,
    Bundle,
    Channel,
    ChannelEntry,
    DeprecationEntry,
    DeprecationReference,
    Deprecations,
    Icon,
    Package,
    Property,
    RelatedImage,
    View,
    embedded_csv,
    view,
)
from olm.fbc._validate import SEMVER, Validator, checked, validate
from olm.fbc._walk import DEFAULT_MAX_OBJECT_BYTES, iter_files, iter_metas, iter_stream

__all__ = [
    "DEFAULT_MAX_OBJECT_BYTES",
    "PROPERTY_BUNDLE_OBJECT",
    "SCHEMA_BUNDLE",
    "SCHEMA_CHANNEL",
    "SCHEMA_DEPRECATIONS",
    "SCHEMA_PACKAGE",
    "SEMVER",
    "Bundle",
    "CatalogError",
    "Channel",
    "ChannelEntry",
    "DeprecationEntry",
    "DeprecationReference",
    "Deprecations",
    "Icon",
    "InvalidCatalog",
    "KubernetesLoader",
    "Meta",
    "Origin",
    "Package",
    "ParseError",
    "Problem",
    "Property",
    "RelatedImage",
    "ShapeError",
    "Validator",
    "View",
    "checked",
    "embedded_csv",
    "iter_files",
    "iter_metas",
    "iter_stream",
    "validate",
    "view",
]
