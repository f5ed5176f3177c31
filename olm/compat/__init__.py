"""Go and Kubernetes compatibility: reading and writing data the way upstream's Go code does.

OLM's behaviour is defined by Go programs; where Python's libraries differ, these modules follow Go:

- `kubeyaml`: YAML read as sigs.k8s.io/yaml reads it (catalogs and bundle manifests alike);
- `gojson`: JSON bytes exactly as encoding/json writes them (for hashes and annotations);
- `gotypes`: Go struct round trips described as data; `k8stypes` holds the Kubernetes tables;
- `quantity`: resource quantities in canonical form;
- `goformat`: Go's fmt verbs (%q, %v) as upstream's messages use them.
- `httpproxy`: which proxy a request goes through, from `HTTPS_PROXY`/`NO_PROXY` as Go decides.

A shared leaf: it imports no other part of `olm` and neither process.
"""
