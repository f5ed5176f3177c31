"""The `operator_controller` process: the ClusterExtension and ClusterObjectSet controllers.

The ClusterExtension controller (`clusterextension`) is a list of steps, each calling into one
package of the install pipeline, in the order they run: `catalogs` (which catalogs, their content),
`resolve` (which bundle), `unpack` (the bundle image, read as registry+v1), `render` (plain
Kubernetes objects), `preflight` (CRD upgrade safety, permissions) and `applier` (a ClusterObjectSet
revision and the Secrets holding its objects). The ClusterObjectSet controller (`clusterobjectset`)
rolls revisions out, whoever wrote them. Both act as a ServiceAccount an object names only while the
admission policy guarding that name is in force (`identity_policy`). `main` wires both into one
process.
"""
