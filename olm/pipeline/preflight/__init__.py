"""Preflight checks that run on rendered objects before anything is applied.

`crdupgradesafety` compares each CRD a bundle would install with the CRD already on the cluster and
lists every change that could break stored objects or clients (scope, stored versions, removed fields,
type/enum/default/bound/required/pattern/nullable changes, anything unrecognised). It is pure: the
caller reads the existing CRDs and decides whether `Strict` enforcement blocks or `None` skips.

`permissions` lists what the ClusterExtension's ServiceAccount must be allowed to do to roll out the
objects (`requirements`, pure), asks the API server with SubjectAccessReviews which of those it is
denied (`missing_permissions`), and words them for the condition (`MissingPermissionsError`).
"""

from olm.pipeline.preflight import crdupgradesafety, permissions
from olm.pipeline.preflight.crdupgradesafety import CRDUpgradeSafetyError
from olm.pipeline.preflight.permissions import MissingPermissionsError

__all__ = ["CRDUpgradeSafetyError", "MissingPermissionsError", "crdupgradesafety", "permissions"]
