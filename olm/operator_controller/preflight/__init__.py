"""Preflight checks that run on rendered objects before anything is applied.

`crdupgradesafety` compares each CRD a bundle would install with the CRD already on the cluster and
lists every change that could break stored objects or clients (scope, stored versions, removed fields,
type/enum/default/bound/required/pattern/nullable changes, anything unrecognised). It is pure: the
caller reads the existing CRDs and decides whether `Strict` enforcement blocks or `None` skips.
"""

from olm.operator_controller.preflight import crdupgradesafety
from olm.operator_controller.preflight.crdupgradesafety import CRDUpgradeSafetyError

__all__ = ["CRDUpgradeSafetyError", "crdupgradesafety"]
