"""The ClusterExtension configuration for a registry+v1 bundle: `watchNamespace` and `deploymentConfig`.

Upstream validates `spec.config.inline` against a JSON schema derived from the CSV's install modes and
reports errors in the jsonschema library's output order and its own wording. This module applies the
same rules and reproduces those messages:

- only AllNamespaces (or MultiNamespace) supported: `watchNamespace` is an unknown field;
- OwnNamespace and/or SingleNamespace without AllNamespaces: `watchNamespace` is required;
- with AllNamespaces as well: optional (null or absent means all namespaces);
- Own without Single: it must equal the install namespace; Single without Own: it must differ;
- a namespace name: 1-63 characters matching `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`;
- `deploymentConfig`: only SubscriptionConfig's fields (no `selector`), with their JSON types.

Messages read `invalid ClusterExtension configuration: invalid configuration: <detail>` and raise
`InvalidConfigurationError`. Nested Kubernetes types inside `deploymentConfig` are checked by
decoding them as Go would, not against the full OpenAPI schema upstream embeds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from olm.compat import gotypes
from olm.pipeline.render._deploymentconfig import DeploymentConfig, parse_deployment_config
from olm.pipeline.render._errors import InvalidConfigurationError
from olm.registryv1.clusterserviceversion import (
    ALL_NAMESPACES,
    OWN_NAMESPACE,
    SINGLE_NAMESPACE,
    ClusterServiceVersion,
)

__all__ = ["BundleConfig", "parse_config"]

_NAMESPACE_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_OWN_FORMAT = "ownNamespaceInstallMode"
_SINGLE_FORMAT = "singleNamespaceInstallMode"
_DEPLOYMENT_CONFIG_TYPES = {
    "affinity": "object",
    "annotations": "object",
    "env": "array",
    "envFrom": "array",
    "nodeSelector": "object",
    "resources": "object",
    "tolerations": "array",
    "volumeMounts": "array",
    "volumes": "array",
}
_STRING_MAPS = ("annotations", "nodeSelector")


@dataclass(frozen=True)
class BundleConfig:
    """A validated configuration: the namespace to watch (None: the bundle's default) and Deployment
    customisations (None: none)."""

    watch_namespace: str | None = None
    deployment_config: DeploymentConfig | None = field(default=None)


@dataclass
class _Error:
    kind: str
    location: tuple[str, ...]
    detail: dict[str, Any] = field(default_factory=dict)
    causes: list[_Error] = field(default_factory=list)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _combine(errors: list[_Error], location: tuple[str, ...]) -> _Error | None:
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else _Error("group", location, causes=errors)


def parse_config(csv: ClusterServiceVersion, config: Any, install_namespace: str) -> BundleConfig:
    """Validate `spec.config.inline` (already decoded JSON, None when absent) for this bundle."""
    value = {} if config is None else config
    error = _validate_root(csv, value, install_namespace)
    if error is not None:
        raise InvalidConfigurationError(
            f"invalid ClusterExtension configuration: invalid configuration: {_format(error)}"
        )
    watch = value.get("watchNamespace")
    deployment_config = None
    if value.get("deploymentConfig") is not None:
        try:
            deployment_config = parse_deployment_config(value["deploymentConfig"])
        except gotypes.GoTypeError as err:
            raise InvalidConfigurationError(
                f"invalid deploymentConfig: failed to unmarshal deploymentConfig: {err}"
            ) from err
    return BundleConfig(watch_namespace=watch, deployment_config=deployment_config)


def _validate_root(csv: ClusterServiceVersion, value: Any, install_namespace: str) -> _Error | None:
    if not isinstance(value, dict):
        return _Error("type", (), {"got": _json_type(value), "want": "object"})
    modes = csv.supported_install_modes
    configurable = bool(modes & {OWN_NAMESPACE, SINGLE_NAMESPACE})
    required = configurable and ALL_NAMESPACES not in modes
    errors: list[_Error] = []
    if required and "watchNamespace" not in value:
        errors.append(_Error("required", (), {"missing": "watchNamespace"}))
    unknown = []
    for key, item in value.items():
        if key == "watchNamespace" and configurable:
            err = _validate_watch(item, modes, required, install_namespace)
        elif key == "deploymentConfig":
            err = _validate_deployment_config(item)
        else:
            unknown.append(key)
            continue
        if err is not None:
            errors.append(err)
    if unknown:
        errors.append(_Error("additionalProperties", (), {"properties": unknown}))
    return _combine(errors, ())


def _validate_watch(
    value: Any, modes: frozenset[str], required: bool, install_namespace: str
) -> _Error | None:
    location = ("watchNamespace",)
    fmt = None
    if OWN_NAMESPACE in modes and SINGLE_NAMESPACE not in modes:
        fmt = _OWN_FORMAT
    elif SINGLE_NAMESPACE in modes and OWN_NAMESPACE not in modes:
        fmt = _SINGLE_FORMAT
    string_error = _validate_namespace_string(value, fmt, install_namespace, location)
    if required:
        return string_error
    if value is None or string_error is None:
        return None
    null_error = _Error("type", location, {"got": _json_type(value), "want": "null"})
    return _Error("anyOf", location, causes=[null_error, string_error])


def _validate_namespace_string(
    value: Any, fmt: str | None, install_namespace: str, location: tuple[str, ...]
) -> _Error | None:
    if not isinstance(value, str):
        return _Error("type", location, {"got": _json_type(value), "want": "string"})
    if fmt is not None and install_namespace:
        reason = None
        if fmt == _OWN_FORMAT and value != install_namespace:
            reason = (
                f'invalid value "{value}": must be "{install_namespace}" (the namespace where the '
                "operator is installed) because this operator only supports OwnNamespace install mode"
            )
        elif fmt == _SINGLE_FORMAT and value == install_namespace:
            reason = (
                f'invalid value "{value}": must be different from "{install_namespace}" (the install '
                "namespace) because this operator uses SingleNamespace install mode to watch a different "
                "namespace"
            )
        if reason is not None:
            return _Error("format", location, {"got": value, "want": fmt, "reason": reason})
    errors = []
    if len(value) < 1:
        errors.append(_Error("minLength", location, {"got": len(value), "want": 1}))
    if len(value) > 63:
        errors.append(_Error("maxLength", location, {"got": len(value), "want": 63}))
    if not re.search(_NAMESPACE_PATTERN, value):
        errors.append(_Error("pattern", location, {"want": _NAMESPACE_PATTERN}))
    return _combine(errors, location)


def _validate_deployment_config(value: Any) -> _Error | None:
    location = ("deploymentConfig",)
    if not isinstance(value, dict):
        return _Error("type", location, {"got": _json_type(value), "want": "object"})
    errors: list[_Error] = []
    unknown = []
    for key, item in value.items():
        want = _DEPLOYMENT_CONFIG_TYPES.get(key)
        if want is None:
            unknown.append(key)
            continue
        here = (*location, key)
        if _json_type(item) != want:
            errors.append(_Error("type", here, {"got": _json_type(item), "want": want}))
        elif key in _STRING_MAPS:
            errors.extend(
                _Error("type", (*here, k), {"got": _json_type(v), "want": "string"})
                for k, v in item.items()
                if not isinstance(v, str)
            )
        elif want == "array":
            errors.extend(
                _Error("type", (*here, str(i)), {"got": _json_type(v), "want": "object"})
                for i, v in enumerate(item)
                if not isinstance(v, dict)
            )
    if unknown:
        errors.append(_Error("additionalProperties", location, {"properties": unknown}))
    return _combine(errors, location)


def _flatten(error: _Error) -> list[_Error]:
    """The jsonschema library's "basic" output: every node of the error tree, pre-order."""
    if not error.causes:
        return [error]
    out = [error]
    for cause in error.causes:
        out.extend(_flatten(cause))
    return out


def _format(error: _Error) -> str:
    messages = [_message(unit) for unit in _flatten(error)]
    if len(messages) == 1:
        return messages[0]
    return "multiple errors found:\n  - " + "\n  - ".join(messages)


def _quote(text: str) -> str:
    inner = text.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{inner}'"


def _message(error: _Error) -> str:
    path = ".".join(error.location)
    d = error.detail
    if error.kind == "required":
        return f'required field "{d["missing"]}" is missing'
    if error.kind == "additionalProperties":
        return f'unknown field "{d["properties"][0]}"'
    if error.kind == "type":
        text = f"got {d['got']}, want {d['want']}"
        if not path:
            return f"invalid type: {text}"
        if d["got"] == "null":
            return f'required field "{path}" is missing'
        return f'invalid type for field "{path}": {text}'
    if error.kind == "format":
        return (
            f'invalid format for field "{path}": {_quote(d["got"])} is not valid {d["want"]}: {d["reason"]}'
        )
    if error.kind == "anyOf":
        return f'invalid value for field "{path}"'
    if error.kind == "minLength":
        return f'field "{path}" must have minimum length of {d["want"]} (len={d["got"]})'
    if error.kind == "maxLength":
        return f'field "{path}" must have maximum length of {d["want"]} (len={d["got"]})'
    if error.kind == "pattern":
        return f'field "{path}" must match pattern "{d["want"]}"'
    return "validation failed"
