// Command controller is cert-manager's controller, built from the pinned cert-manager module. It is
// the wiring of cert-manager's cmd/controller (one shared context factory, every controller built
// before the informers start) with leader election, metrics, health and profiling servers left out:
// one replica on loopback needs none of them, and it never races another process for a port.
//
// The controllers and issuers are cert-manager's defaults except Venafi, whose client library
// (github.com/Venafi/vcert/v5) cannot be fetched from the module proxy at the version cert-manager
// requires. The configuration values are cert-manager's documented defaults
// (internal/apis/config/controller/v1alpha1/defaults.go), which a main outside cert-manager's
// module may not import.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/apis/certmanager"
	"github.com/cert-manager/cert-manager/pkg/controller"
	challengescontroller "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	orderscontroller "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	shimingresscontroller "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/ingresses"
	cracmecontroller "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/acme"
	crapprovercontroller "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crcacontroller "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsignedcontroller "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	crvaultcontroller "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/vault"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	certificatesmetricscontroller "github.com/cert-manager/cert-manager/pkg/controller/certificates/metrics"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	clusterissuerscontroller "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	issuerscontroller "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	dnsutil "github.com/cert-manager/cert-manager/pkg/issuer/acme/dns/util"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/resource"

	// Issuer implementations register themselves with the issuer factory when imported.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/vault"
)

// enabledControllers is cert-manager's DefaultEnabledControllers without the Venafi one.
var enabledControllers = []string{
	issuerscontroller.ControllerName,
	clusterissuerscontroller.ControllerName,
	certificatesmetricscontroller.ControllerName,
	shimingresscontroller.ControllerName,
	orderscontroller.ControllerName,
	challengescontroller.ControllerName,
	cracmecontroller.CRControllerName,
	crapprovercontroller.ControllerName,
	crcacontroller.CRControllerName,
	crselfsignedcontroller.CRControllerName,
	crvaultcontroller.CRControllerName,
	trigger.ControllerName,
	issuing.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
}

const concurrentWorkers = 5

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to the kubeconfig of the cluster to manage")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "kube-system",
		"namespace holding the Secrets that ClusterIssuers refer to")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logf.InitLogs()
	defer logf.FlushLogs()
	ctx = logf.NewContext(ctx, logf.Log, "controller")

	if err := run(ctx, options(*kubeconfig, *clusterResourceNamespace)); err != nil {
		fmt.Fprintf(os.Stderr, "controller: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, opts controller.ContextOptions) error {
	factory, err := controller.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	group, ctx := errgroup.WithContext(ctx)
	for _, name := range enabledControllers {
		construct, ok := controller.Known()[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		iface, err := construct(factory)
		if err != nil {
			return fmt.Errorf("constructing controller %q: %w", name, err)
		}
		group.Go(func() error { return iface.Run(concurrentWorkers, ctx) })
	}
	// Informers start after every controller registered its handlers, as upstream does.
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	return group.Wait()
}

func options(kubeconfig, clusterResourceNamespace string) controller.ContextOptions {
	return controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		ACMEOptions: controller.ACMEOptions{
			// No HTTP01 solver image: ACME cannot reach a public CA from the loopback cluster.
			HTTP01SolverResourceRequestCPU:    resource.MustParse("10m"),
			HTTP01SolverResourceRequestMemory: resource.MustParse("64Mi"),
			HTTP01SolverResourceLimitsCPU:     resource.MustParse("100m"),
			HTTP01SolverResourceLimitsMemory:  resource.MustParse("64Mi"),
			ACMEHTTP01SolverRunAsNonRoot:      true,
			DNS01Nameservers:                  dnsutil.RecursiveNameservers,
			DNS01CheckRetryPeriod:             10 * time.Second,
			DNS01CheckAuthoritative:           true,
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: 60},
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace:        clusterResourceNamespace,
			ClusterIssuerAmbientCredentials: true,
		},
		IngressShimOptions: controller.IngressShimOptions{
			DefaultIssuerKind:                 "Issuer",
			DefaultIssuerGroup:                certmanager.GroupName,
			DefaultAutoCertificateAnnotations: []string{"kubernetes.io/tls-acme"},
		},
		CertificateOptions: controller.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	}
}
