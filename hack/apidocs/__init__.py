"""API reference generator: `manifests/crds/*.yaml` -> `docs/reference/<plural>.md`.

`schema` walks a CRD's OpenAPI schema into sections (one per object with fields of its own) and
describes each field's type and constraints in words, `markdown` renders one page per CRD, and
`__main__` writes the pages or, with `--check`, fails when the pages on disk are stale. The pages
are read from the generated CRDs rather than from `olm/api`, so they document exactly what the API
server enforces. Generated pages are never edited by hand.
"""
