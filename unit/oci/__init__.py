"""Tests of olm.oci: references, auth, manifests, the blob cache, safe extraction, the client."""
