"""Greeter: a complete example controller on olm_runtime's public API.

A `Greeting` (greeter.example.com/v1, namespaced) asks for a ConfigMap holding its message. The
controller keeps that ConfigMap (owned by the Greeting, so deleting the Greeting deletes it and
changing or deleting the ConfigMap brings it back), reports a `Ready` condition, records Events,
and uses a finalizer to say goodbye in an Event before the Greeting goes.

    python -m examples.greeter --kubeconfig ~/.kube/config   # needs the CRD: see CRD below
"""
