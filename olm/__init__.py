"""Operator Lifecycle Manager v1: catalogd, operator-controller and the pieces they share.

`olm.api`, `olm.fbc`, `olm.semver` and `olm.oci` are leaves used by both processes;
`olm.catalogd` and `olm.operator_controller` never import each other (checked by import-linter).
"""
