// Command controllerruntime-peer runs one benchmark scenario with controller-runtime and prints its
// figures as one JSON object per line.
//
//	-mode sync:   build an informer cache of ConfigMaps in -namespace; report seconds to synced and
//	              resident memory before and after.
//	-mode events: reconcile ConfigMaps in -namespace with a no-op reconciler; print {"ready":true}
//	              once the initial list (-objects) is reconciled; for every update carrying the annotation bench/written-at (unix
//	              nanoseconds) record the delay from that write to its reconcile; after -expect such
//	              updates print reconciles per second and latency percentiles.
//	-mode queue:  client-go workqueue add/get/done cycles per second in-process (-expect items).
//	-mode idle:   a manager with one ConfigMap controller over an empty -namespace; resident memory.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const writtenAt = "bench/written-at"

func rssBytes() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func emit(v map[string]any) {
	out, _ := json.Marshal(v)
	fmt.Println(string(out))
}

func main() {
	kubeconfig := flag.String("kubeconfig-file", "", "admin kubeconfig")
	namespace := flag.String("namespace", "", "namespace of the ConfigMaps")
	mode := flag.String("mode", "sync", "sync or events")
	expect := flag.Int("expect", 0, "events mode: annotated updates to wait for")
	workers := flag.Int("workers", 1, "events mode: max concurrent reconciles")
	objects := flag.Int("objects", 0, "events mode: objects the initial list reconciles before ready")
	flag.Parse()
	log.SetLogger(logr.Discard())

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		panic(err)
	}
	// No client-side throttling: the Python runtime has none either.
	cfg.QPS, cfg.Burst = -1, 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cacheOptions := cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}}

	switch *mode {
	case "sync":
		runtime.GC()
		before := rssBytes()
		started := time.Now()
		c, err := cache.New(cfg, cacheOptions)
		if err != nil {
			panic(err)
		}
		if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
			panic(err)
		}
		go func() { _ = c.Start(ctx) }()
		if !c.WaitForCacheSync(ctx) {
			panic("cache did not sync")
		}
		elapsed := time.Since(started).Seconds()
		var list corev1.ConfigMapList
		if err := c.List(ctx, &list); err != nil {
			panic(err)
		}
		runtime.GC()
		emit(map[string]any{"sync_seconds": elapsed, "objects": len(list.Items), "rss_before": before, "rss_after": rssBytes()})
	case "events":
		runEvents(ctx, cfg, cacheOptions, *expect, *workers, *objects)
	case "queue":
		runQueue(*expect)
	case "idle":
		runIdle(ctx, cfg, cacheOptions)
	default:
		panic("unknown mode " + *mode)
	}
}

type recorder struct {
	mu         sync.Mutex
	seen       map[string]int64
	latencies  []float64
	reconciles int
	first      time.Time
	done       chan struct{}
	expect     int
	startedNs  int64
}

func (r *recorder) Reconcile(ctx context.Context, req ctrl.Request, c client.Client) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := time.Now().UnixNano()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reconciles++
	stamp, err := strconv.ParseInt(cm.Annotations[writtenAt], 10, 64)
	// Stamps older than this process come from earlier runs, not from this run's updates.
	if err != nil || stamp <= r.seen[req.String()] || stamp <= r.startedNs {
		return ctrl.Result{}, nil
	}
	r.seen[req.String()] = stamp
	if len(r.latencies) == 0 {
		r.first = time.Now()
	}
	r.latencies = append(r.latencies, float64(now-stamp)/1e9)
	if len(r.latencies) == r.expect {
		close(r.done)
	}
	return ctrl.Result{}, nil
}

func runEvents(ctx context.Context, cfg *rest.Config, cacheOptions cache.Options, expect, workers, objects int) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cacheOptions, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		panic(err)
	}
	rec := &recorder{seen: map[string]int64{}, done: make(chan struct{}), expect: expect, startedNs: time.Now().UnixNano()}
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(reconcileFunc(func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
			return rec.Reconcile(ctx, req, c)
		}))
	if err != nil {
		panic(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		panic("cache did not sync")
	}
	for {
		rec.mu.Lock()
		listed := rec.reconciles >= objects
		rec.mu.Unlock()
		if listed {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	emit(map[string]any{"ready": true})
	<-rec.done
	elapsed := time.Since(rec.first).Seconds()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	sort.Float64s(rec.latencies)
	pct := func(p float64) float64 { return rec.latencies[int(p*float64(len(rec.latencies)-1))] }
	emit(map[string]any{
		"events": len(rec.latencies), "reconciles": rec.reconciles, "seconds": elapsed,
		"per_second": float64(len(rec.latencies)) / elapsed, "p50": pct(0.5), "p99": pct(0.99),
		"rss": rssBytes(),
	})
}

type reconcileFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

func (f reconcileFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

func runQueue(items int) {
	q := workqueue.NewTyped[int]()
	started := time.Now()
	for i := 0; i < items; i++ {
		q.Add(i)
		item, _ := q.Get()
		q.Done(item)
	}
	elapsed := time.Since(started).Seconds()
	emit(map[string]any{"cycles": items, "seconds": elapsed, "per_second": float64(items) / elapsed})
}

func runIdle(ctx context.Context, cfg *rest.Config, cacheOptions cache.Options) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Cache: cacheOptions, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		panic(err)
	}
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).
		Complete(reconcileFunc(func(context.Context, ctrl.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }))
	if err != nil {
		panic(err)
	}
	go func() { _ = mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		panic("cache did not sync")
	}
	time.Sleep(2 * time.Second) // let start-up allocations settle before reading RSS
	runtime.GC()
	emit(map[string]any{"rss": rssBytes()})
}
