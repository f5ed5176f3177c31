"""The Go types upstream decodes bundle content into, described as `gotypes` tables.

Modelled in detail where a round trip changes what is rendered: Deployments down to containers,
resources, env, ports, tolerations and volumes; CustomResourceDefinitions down to every
JSONSchemaProps; RBAC rules; label selectors. Deeper or rarely used subtrees are `Raw`.
"""

from __future__ import annotations

from olm.compat.gotypes import (
    Field,
    GoType,
    Lazy,
    Map,
    Ptr,
    Quantity,
    Raw,
    Scalar,
    SchemaOr,
    Slice,
    Struct,
    Time,
)

__all__ = [
    "CRD",
    "CRD_VERSION",
    "DEPLOYMENT",
    "DEPLOYMENT_SPEC",
    "ENV_VAR",
    "JSON_SCHEMA_PROPS",
    "LABEL_SELECTOR",
    "OBJECT_META",
    "POLICY_RULE",
    "RESOURCE_REQUIREMENTS",
    "RULE_WITH_OPERATIONS",
    "TOLERATION",
    "VOLUME",
]

STR = Scalar("string")
BOOL = Scalar("bool")
INT = Scalar("int")
FLOAT = Scalar("float")
RAW = Raw()


def _f(t: GoType, omitempty: bool = True) -> Field:
    return Field(t, omitempty)


def _struct(required: dict[str, GoType] | None = None, /, **optional: GoType) -> Struct:
    fields = {name: _f(t, False) for name, t in (required or {}).items()}
    # Python names stand in for JSON names: x__kubernetes__list__type, _dollar_ref.
    fields.update({name.replace("_dollar_", "$").replace("__", "-"): _f(t) for name, t in optional.items()})
    return Struct(fields)


OBJECT_META = Struct(
    {
        "name": _f(STR),
        "generateName": _f(STR),
        "namespace": _f(STR),
        "selfLink": _f(STR),
        "uid": _f(STR),
        "resourceVersion": _f(STR),
        "generation": _f(INT),
        "creationTimestamp": _f(Time()),
        "deletionTimestamp": _f(Ptr(RAW)),
        "deletionGracePeriodSeconds": _f(Ptr(INT)),
        "labels": _f(Map(STR)),
        "annotations": _f(Map(STR)),
        "ownerReferences": _f(Slice(RAW)),
        "finalizers": _f(Slice(STR)),
        "managedFields": _f(Slice(RAW)),
    }
)

LABEL_SELECTOR = _struct(
    matchLabels=Map(STR),
    matchExpressions=Slice(_struct({"key": STR, "operator": STR}, values=Slice(STR))),
)

RESOURCE_REQUIREMENTS = _struct(limits=Map(Quantity()), requests=Map(Quantity()), claims=Slice(RAW))

ENV_VAR = _struct(
    {"name": STR},
    value=STR,
    valueFrom=Ptr(
        _struct(
            fieldRef=Ptr(_struct({"fieldPath": STR}, apiVersion=STR)),
            resourceFieldRef=Ptr(_struct({"resource": STR, "divisor": Quantity()}, containerName=STR)),
            configMapKeyRef=Ptr(RAW),
            secretKeyRef=Ptr(RAW),
            fileKeyRef=Ptr(RAW),
        )
    ),
)

_CONTAINER_PORT = _struct({"containerPort": INT}, name=STR, hostPort=INT, protocol=STR, hostIP=STR)

CONTAINER = _struct(
    {"name": STR, "resources": RESOURCE_REQUIREMENTS},
    image=STR,
    command=Slice(STR),
    args=Slice(STR),
    workingDir=STR,
    ports=Slice(_CONTAINER_PORT),
    envFrom=Slice(RAW),
    env=Slice(ENV_VAR),
    resizePolicy=Slice(RAW),
    restartPolicy=Ptr(STR),
    restartPolicyRules=Slice(RAW),
    volumeMounts=Slice(RAW),
    volumeDevices=Slice(RAW),
    livenessProbe=Ptr(RAW),
    readinessProbe=Ptr(RAW),
    startupProbe=Ptr(RAW),
    lifecycle=Ptr(RAW),
    terminationMessagePath=STR,
    terminationMessagePolicy=STR,
    imagePullPolicy=STR,
    securityContext=Ptr(RAW),
    stdin=BOOL,
    stdinOnce=BOOL,
    tty=BOOL,
)

_VOLUME_SOURCES = (
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)

VOLUME = Struct(
    {
        "name": _f(STR, False),
        "emptyDir": _f(Ptr(_struct(medium=STR, sizeLimit=Ptr(Quantity())))),
        **{source: _f(Ptr(RAW)) for source in _VOLUME_SOURCES},
    }
)

TOLERATION = _struct(key=STR, operator=STR, value=STR, effect=STR, tolerationSeconds=Ptr(INT))

POD_SPEC = _struct(
    {"containers": Slice(CONTAINER)},
    volumes=Slice(VOLUME),
    initContainers=Slice(CONTAINER),
    ephemeralContainers=Slice(RAW),
    restartPolicy=STR,
    terminationGracePeriodSeconds=Ptr(INT),
    activeDeadlineSeconds=Ptr(INT),
    dnsPolicy=STR,
    nodeSelector=Map(STR),
    serviceAccountName=STR,
    serviceAccount=STR,
    automountServiceAccountToken=Ptr(BOOL),
    nodeName=STR,
    hostNetwork=BOOL,
    hostPID=BOOL,
    hostIPC=BOOL,
    shareProcessNamespace=Ptr(BOOL),
    securityContext=Ptr(RAW),
    imagePullSecrets=Slice(RAW),
    hostname=STR,
    subdomain=STR,
    affinity=Ptr(RAW),
    schedulerName=STR,
    tolerations=Slice(TOLERATION),
    hostAliases=Slice(RAW),
    priorityClassName=STR,
    priority=Ptr(INT),
    dnsConfig=Ptr(RAW),
    readinessGates=Slice(RAW),
    runtimeClassName=Ptr(STR),
    enableServiceLinks=Ptr(BOOL),
    preemptionPolicy=Ptr(STR),
    overhead=Map(Quantity()),
    topologySpreadConstraints=Slice(RAW),
    setHostnameAsFQDN=Ptr(BOOL),
    os=Ptr(RAW),
    hostUsers=Ptr(BOOL),
    schedulingGates=Slice(RAW),
    resourceClaims=Slice(RAW),
    resources=Ptr(RESOURCE_REQUIREMENTS),
    hostnameOverride=Ptr(STR),
)

POD_TEMPLATE_SPEC = _struct({"metadata": OBJECT_META, "spec": POD_SPEC})

DEPLOYMENT_SPEC = _struct(
    {"template": POD_TEMPLATE_SPEC, "strategy": _struct(type=STR, rollingUpdate=Ptr(RAW))},
    replicas=Ptr(INT),
    selector=Ptr(LABEL_SELECTOR),
    minReadySeconds=INT,
    revisionHistoryLimit=Ptr(INT),
    paused=BOOL,
    progressDeadlineSeconds=Ptr(INT),
)

DEPLOYMENT = _struct(
    {"metadata": OBJECT_META, "spec": DEPLOYMENT_SPEC, "status": Struct({})}, apiVersion=STR, kind=STR
)

POLICY_RULE = _struct(
    {"verbs": Slice(STR)},
    apiGroups=Slice(STR),
    resources=Slice(STR),
    resourceNames=Slice(STR),
    nonResourceURLs=Slice(STR),
)

RULE_WITH_OPERATIONS = _struct(
    operations=Slice(STR), apiGroups=Slice(STR), apiVersions=Slice(STR), resources=Slice(STR), scope=Ptr(STR)
)


def _schema() -> GoType:
    return JSON_SCHEMA_PROPS


_SCHEMA = Lazy(_schema)

JSON_SCHEMA_PROPS: GoType = _struct(
    id=STR,
    _dollar_schema=STR,
    _dollar_ref=Ptr(STR),
    description=STR,
    type=STR,
    format=STR,
    title=STR,
    default=Ptr(RAW),
    maximum=Ptr(FLOAT),
    exclusiveMaximum=BOOL,
    minimum=Ptr(FLOAT),
    exclusiveMinimum=BOOL,
    maxLength=Ptr(INT),
    minLength=Ptr(INT),
    pattern=STR,
    maxItems=Ptr(INT),
    minItems=Ptr(INT),
    uniqueItems=BOOL,
    multipleOf=Ptr(FLOAT),
    enum=Slice(RAW),
    maxProperties=Ptr(INT),
    minProperties=Ptr(INT),
    required=Slice(STR),
    items=SchemaOr(_SCHEMA, "array"),
    allOf=Slice(_SCHEMA),
    oneOf=Slice(_SCHEMA),
    anyOf=Slice(_SCHEMA),
    **{"not": Ptr(_SCHEMA)},
    properties=Map(_SCHEMA),
    additionalProperties=SchemaOr(_SCHEMA, "bool"),
    patternProperties=Map(_SCHEMA),
    dependencies=Map(RAW),
    additionalItems=SchemaOr(_SCHEMA, "bool"),
    definitions=Map(_SCHEMA),
    externalDocs=Ptr(RAW),
    example=Ptr(RAW),
    nullable=BOOL,
    x__kubernetes__preserve__unknown__fields=Ptr(BOOL),
    x__kubernetes__embedded__resource=BOOL,
    x__kubernetes__int__or__string=BOOL,
    x__kubernetes__list__map__keys=Slice(STR),
    x__kubernetes__list__type=Ptr(STR),
    x__kubernetes__map__type=Ptr(STR),
    x__kubernetes__validations=Slice(RAW),
)

_CRD_NAMES = _struct(
    {"plural": STR, "kind": STR}, singular=STR, shortNames=Slice(STR), listKind=STR, categories=Slice(STR)
)

CRD_VERSION = _struct(
    {"name": STR, "served": BOOL, "storage": BOOL},
    deprecated=BOOL,
    deprecationWarning=Ptr(STR),
    schema=Ptr(_struct(openAPIV3Schema=Ptr(JSON_SCHEMA_PROPS))),
    subresources=Ptr(_struct(status=Ptr(RAW), scale=Ptr(RAW))),
    additionalPrinterColumns=Slice(
        _struct({"name": STR, "type": STR, "jsonPath": STR}, format=STR, description=STR, priority=INT)
    ),
    selectableFields=Slice(RAW),
)

CRD = _struct(
    {
        "metadata": OBJECT_META,
        "spec": _struct(
            {"group": STR, "names": _CRD_NAMES, "scope": STR, "versions": Slice(CRD_VERSION)},
            conversion=Ptr(RAW),
            preserveUnknownFields=BOOL,
        ),
        "status": _struct(
            {"conditions": Slice(RAW), "acceptedNames": _CRD_NAMES, "storedVersions": Slice(STR)}
        ),
    },
    apiVersion=STR,
    kind=STR,
)
