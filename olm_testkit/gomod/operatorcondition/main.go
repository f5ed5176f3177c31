// Command operator-condition sets and reads a condition of the OperatorCondition of the operator it
// runs as, through operator-lib's `conditions` package, unchanged: the e2e tests run it with a
// Pod's view (in-cluster config, the ServiceAccount's token and namespace, OPERATOR_CONDITION_NAME)
// to act exactly as an operator built with operator-lib does, RBAC and all.
//
//	operator-condition set TYPE STATUS REASON MESSAGE
//	operator-condition get TYPE      (prints {"type","status","reason","message"} as one JSON line)
//
// Any error goes to stderr with exit status 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	apiv2 "github.com/operator-framework/api/pkg/operators/v2"
	"github.com/operator-framework/operator-lib/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
)

const usage = "usage: operator-condition set TYPE STATUS REASON MESSAGE | get TYPE"

func run(ctx context.Context, args []string) error {
	if len(args) < 2 || !(args[0] == "set" && len(args) == 5 || args[0] == "get" && len(args) == 2) {
		return fmt.Errorf("%s", usage)
	}
	// config.GetConfig is ctrl.GetConfig: without KUBECONFIG, the in-cluster config.
	cfg, err := config.GetConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := apiv2.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	cond, err := conditions.InClusterFactory{Client: c}.NewCondition(apiv2.ConditionType(args[1]))
	if err != nil {
		return err
	}
	if args[0] == "set" {
		return cond.Set(ctx, metav1.ConditionStatus(args[2]),
			conditions.WithReason(args[3]), conditions.WithMessage(args[4]))
	}
	got, err := cond.Get(ctx)
	if err != nil {
		return err
	}
	line, err := json.Marshal(struct {
		Type    string `json:"type"`
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}{got.Type, string(got.Status), got.Reason, got.Message})
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	return nil
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
