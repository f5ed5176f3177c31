"""`--feature-gates`: upstream's gate names, parsed and refused the way upstream's parser does.

Upstream's processes take `--feature-gates=A=true,B=false` (Kubernetes' component-base feature
gates); the flag may be repeated and a later value wins. Both processes here take the same flag with
the same syntax, the same gate names per process, and the same messages for what upstream refuses:
a pair without `=` (`missing bool value for A`), a value Go's `strconv.ParseBool` does not read
(`invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax`), a gate the
process does not have (`unrecognized feature gate: A`). `AllAlpha` and `AllBeta` set every alpha (or
beta) gate that is not named itself.

What a gate does here is one of three things (`Here`): a behaviour that is always on here (the
gate accepts true; false is refused, in the words upstream uses for a gate locked to its default,
followed by why), one that does not exist here (false accepted, true refused), or a real switch.
The whole request is checked once every `--feature-gates` flag is read, so a later flag can undo an
earlier one, as upstream.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ALL_ALPHA",
    "ALL_BETA",
    "CATALOGD",
    "OPERATOR_CONTROLLER",
    "Conflict",
    "Gate",
    "Gates",
    "Here",
    "Maturity",
    "Requested",
    "add_flag",
]

ALL_ALPHA = "AllAlpha"
ALL_BETA = "AllBeta"


class Maturity(enum.Enum):
    """Upstream's stage of a gate; `AllAlpha` and `AllBeta` act on the first two."""

    ALPHA = "Alpha"
    BETA = "Beta"
    GA = "GA"


class Here(enum.Enum):
    """What a gate's behaviour is in this implementation."""

    ALWAYS_ON = "always on"
    NOT_IMPLEMENTED = "not implemented"
    SWITCH = "switch"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Gate:
    """One of upstream's gates and what it means here."""

    name: str
    maturity: Maturity
    upstream_default: bool
    """The default in upstream's code (its shipped manifests may set it either way)."""
    here: Here
    why: str
    """Why the gate is locked here (shown when a value is refused), or what the switch does."""

    @property
    def default(self) -> bool:
        """The state when no flag sets it."""
        if self.here is Here.SWITCH:
            return self.upstream_default
        return self.here is Here.ALWAYS_ON


_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _go_bool(key: str, text: str) -> bool:
    """Go's `strconv.ParseBool`, with upstream's message for what it does not read."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise ValueError(
        f'invalid value of {key}={text}, err: strconv.ParseBool: parsing "{text}": invalid syntax'
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Conflict:
    """States of several switches together that this implementation cannot have."""

    states: Mapping[str, bool]
    why: str


@dataclasses.dataclass(frozen=True)
class Gates:
    """A process's gates."""

    gates: tuple[Gate, ...]
    conflicts: tuple[Conflict, ...] = ()

    def names(self) -> tuple[str, ...]:
        return (ALL_ALPHA, ALL_BETA, *(g.name for g in self.gates))

    def parse(self, text: str) -> dict[str, bool]:
        """One flag's `A=true,B=false` (`ValueError` with upstream's message)."""
        pairs: dict[str, bool] = {}
        for item in text.split(","):
            if not item:
                continue
            key, equals, value = item.partition("=")
            key = key.strip()
            if not equals:
                raise ValueError(f"missing bool value for {key}")
            pairs[key] = _go_bool(key, value.strip())
        for key in pairs:
            if key not in self.names():
                raise ValueError(f"unrecognized feature gate: {key}")
        return pairs

    def resolve(self, requested: Mapping[str, bool]) -> dict[str, bool]:
        """Every gate's state under `requested` (the merged flags); `ValueError` naming each gate
        whose requested state this implementation cannot have."""
        problems: list[str] = []
        states: dict[str, bool] = {}
        for gate in self.gates:
            state, source = gate.default, ""
            if gate.name in requested:
                state = requested[gate.name]
            elif gate.maturity is Maturity.ALPHA and ALL_ALPHA in requested:
                state, source = requested[ALL_ALPHA], f" (by {ALL_ALPHA}={_go(requested[ALL_ALPHA])})"
            elif gate.maturity is Maturity.BETA and ALL_BETA in requested:
                state, source = requested[ALL_BETA], f" (by {ALL_BETA}={_go(requested[ALL_BETA])})"
            if gate.here is not Here.SWITCH and state != gate.default:
                problems.append(
                    f"cannot set feature gate {gate.name} to {_go(state)}{source}, feature is locked to "
                    f"{_go(gate.default)} here: {gate.why}"
                )
            states[gate.name] = state
        for conflict in self.conflicts:
            if all(states[name] == state for name, state in conflict.states.items()):
                pairs = ",".join(f"{name}={_go(state)}" for name, state in conflict.states.items())
                problems.append(f"cannot set feature gates {pairs}: {conflict.why}")
        if problems:
            raise ValueError("; ".join(problems))
        return states

    def describe(self) -> list[str]:
        """The flag's help: each gate, its upstream stage and default, and what it is here."""
        return [
            f"{g.name}=true|false ({g.maturity.value}, upstream default={_go(g.upstream_default)}; here: "
            f"{_here(g)})"
            for g in self.gates
        ]


def _go(value: bool) -> str:
    return "true" if value else "false"


def _here(gate: Gate) -> str:
    if gate.here is Here.SWITCH:
        return f"default={_go(gate.default)}"
    return f"always {_go(gate.default)}"


@dataclasses.dataclass(frozen=True)
class Requested:
    """The `--feature-gates` flags read so far, merged (a later flag wins)."""

    gates: Gates
    pairs: Mapping[str, bool] = dataclasses.field(default_factory=dict)

    def resolve(self) -> dict[str, bool]:
        """`Gates.resolve` of the merged request."""
        return self.gates.resolve(self.pairs)


class _Merge(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str, *, gates: Gates, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, default=Requested(gates), **kwargs)
        self.gates = gates

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        try:
            pairs = self.gates.parse(str(values))
        except ValueError as e:
            raise argparse.ArgumentError(self, str(e)) from None
        previous: Requested = getattr(namespace, self.dest)
        setattr(namespace, self.dest, Requested(self.gates, {**previous.pairs, **pairs}))


def add_flag(parser: argparse.ArgumentParser, gates: Gates) -> None:
    """`--feature-gates`, read into `args.feature_gates` (a `Requested`; `resolve()` checks it)."""
    parser.add_argument(
        "--feature-gates",
        action=_Merge,
        gates=gates,
        metavar="A=true,B=false",
        help="upstream's feature gates (repeatable; a later value wins): "
        + "; ".join(gates.describe())
        + f"; {ALL_ALPHA}/{ALL_BETA}=true|false set every alpha/beta gate not named",
    )


OPERATOR_CONTROLLER = Gates(
    (
        Gate(
            name="BoxcutterRuntime",
            maturity=Maturity.ALPHA,
            upstream_default=False,
            here=Here.ALWAYS_ON,
            why="every install and upgrade is rolled out as ClusterObjectSet revisions; there is no "
            "Helm applier",
        ),
        Gate(
            name="BundleReleaseSupport",
            maturity=Maturity.ALPHA,
            upstream_default=False,
            here=Here.NOT_IMPLEMENTED,
            why="the release field of the olm.package property is not read; build metadata stays part of "
            "the version",
        ),
        Gate(
            name="DeploymentConfig",
            maturity=Maturity.ALPHA,
            upstream_default=False,
            here=Here.ALWAYS_ON,
            why="spec.config.inline.deploymentConfig is always accepted and applied",
        ),
        Gate(
            name="SingleOwnNamespaceInstallSupport",
            maturity=Maturity.ALPHA,
            upstream_default=False,
            here=Here.ALWAYS_ON,
            why="bundles are always installable in SingleNamespace and OwnNamespace mode "
            "(spec.config.inline.watchNamespace)",
        ),
        Gate(
            name="WebhookProviderCertManager",
            maturity=Maturity.GA,
            upstream_default=True,
            here=Here.SWITCH,
            why="true: bundles with webhooks get their serving certificates from cert-manager; false (with "
            "WebhookProviderOpenshiftServiceCA=false): bundles with webhooks are refused",
        ),
        Gate(
            name="WebhookProviderOpenshiftServiceCA",
            maturity=Maturity.GA,
            upstream_default=True,
            here=Here.SWITCH,
            why="OpenShift's service CA is not implemented as a certificate provider; accepted either way "
            "while WebhookProviderCertManager=true, which takes precedence",
        ),
    ),
    conflicts=(
        Conflict(
            states={"WebhookProviderCertManager": False, "WebhookProviderOpenshiftServiceCA": True},
            why="they choose OpenShift's service CA for the certificates of bundle webhooks, which is "
            "not implemented here; keep WebhookProviderCertManager=true, or also set "
            "WebhookProviderOpenshiftServiceCA=false to refuse bundles with webhooks",
        ),
    ),
)
"""operator-controller's gates (upstream's `internal/operator-controller/features`)."""

CATALOGD = Gates(
    (
        Gate(
            name="APIV1MetasHandler",
            maturity=Maturity.ALPHA,
            upstream_default=False,
            here=Here.ALWAYS_ON,
            why="/api/v1/metas is always served",
        ),
        Gate(
            name="GraphQLCatalogQueries",
            maturity=Maturity.ALPHA,
            upstream_default=False,
            here=Here.NOT_IMPLEMENTED,
            why="no GraphQL endpoint is served",
        ),
    )
)
"""catalogd's gates (upstream's `internal/catalogd/features`)."""
