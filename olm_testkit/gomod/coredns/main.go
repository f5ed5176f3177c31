// Command coredns is the cluster DNS server, built from the pinned github.com/coredns/coredns
// module with only the plugins a cluster DNS on a machine without upstream network uses: the
// full plugin bundle would link every cloud provider's SDK for nothing.
package main

import (
	"fmt"
	"os"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// directives keeps the relative order of the upstream release's generated directive list
// (core/dnsserver/zdirectives.go): a request passes the plugins in this order, whatever the
// Corefile's order. "prometheus" is the metrics plugin's directive name.
var directives = []string{
	"bind",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"hosts",
	"kubernetes",
	"whoami",
}

func main() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	coremain.Run()
}
