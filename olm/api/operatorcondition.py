"""OLM v0's OperatorCondition (`operators.coreos.com/v2`), served here so operators built with
operator-lib can hold their own updates unchanged (roadmap F25, `spec.upgrade.readiness`).

The kind is OLM v0's contract, not this API's: its group, versions (v2 stored, v1 served with the
same schema), scope, names and fields are v0's, so a cluster can move between the two and an
operator cannot tell which OLM created its condition. The model is the source of the CRD
`manifests/crds/operators.coreos.com_operatorconditions.yaml` (`make manifests`); its names and
condition types are in `names`, which the processes import without the models.

An operator reads and writes `spec.conditions` (operator-lib's `conditions.Set` updates the whole
object); an administrator may force a condition with `spec.overrides`, which wins. OLM writes
`spec.deployments` and `spec.serviceAccounts` (who may update the object) and nothing else of it.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from olm.api import names
from olm.api.base import AGE_COLUMN, Model, Resource, ResourceInfo
from olm.api.meta import Conditions

__all__ = ["OperatorCondition", "OperatorConditionSpec", "OperatorConditionStatus"]

_Names = Annotated[list[Annotated[str, Field(max_length=253)]], Field(max_length=64)]


class OperatorConditionSpec(Model):
    """Who may write the conditions, and the conditions the operator and administrators set."""

    service_accounts: _Names | None = None
    """The ServiceAccounts of the operator's Deployments, which may update this object."""
    deployments: _Names | None = None
    """The operator's Deployments, whose containers get `OPERATOR_CONDITION_NAME`."""
    overrides: Conditions | None = None
    """Conditions an administrator forces; one of a type wins over the operator's of that type."""
    conditions: Conditions | None = None
    """Conditions the operator sets, such as `Upgradeable` False while an update would disrupt it."""


class OperatorConditionStatus(Model):
    """The conditions as OLM observed them."""

    conditions: Conditions | None = None
    """A copy of `spec.conditions`, as OLM v0 keeps it."""


class OperatorCondition(Resource):
    """An operator's own signals to OLM, such as whether it may be updated now."""

    info: ClassVar[ResourceInfo] = ResourceInfo(
        kind=names.OPERATOR_CONDITION,
        plural="operatorconditions",
        singular="operatorcondition",
        short_names=("condition",),
        printer_columns=(AGE_COLUMN,),
        group=names.OPERATOR_CONDITION_GROUP,
        versions=(names.OPERATOR_CONDITION_VERSION, "v1"),
        namespaced=True,
    )

    api_version: str = names.OPERATOR_CONDITION_API_VERSION
    kind: Literal["OperatorCondition"] = names.OPERATOR_CONDITION
    spec: OperatorConditionSpec | None = None
    """What the operator and administrators say."""
    status: OperatorConditionStatus | None = None
    """What OLM observed."""
