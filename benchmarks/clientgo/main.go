// Command clientgo is the client-go peer of the cloudcoil_cache informer benchmark.
//
// It runs a SharedInformerFactory Pod informer (all namespaces, no resync) against the kubeconfig
// given on the command line, with handlers doing the same work as the Python benchmark's handlers
// (count the update and delete events once armed), and talks to the harness (benchmarks/peers.py)
// over stdin/stdout, one JSON object per line:
//
//	-> {"event":"synced","sync_s":...,"rss_kb_base":...,"rss_kb":...,"rss_kb_per_pod":...,...}
//	<- arm update 5000     (count the next 5000 update events)
//	-> {"event":"armed","kind":"update"}
//	-> {"event":"done","kind":"update","seen":5000,"cpu_us":...,"cpu_us_per_event":...}
//	<- mem                 (RSS and HeapInuse again, after runtime.GC(): after churn)
//	-> {"event":"mem","rss_kb_per_pod":...,"heap_kb_per_pod":...}
//	<- list default        (list one namespace from the indexer, median of 10)
//	-> {"event":"list","items":...,"list_ns_ms":...}
//	<- stop
//	-> {"event":"stopped"}
//
// RSS is VmRSS from /proc/self/status after runtime.GC(), minus a baseline measured the same way
// before the informer starts; rss_kb_released is the same after debug.FreeOSMemory() (heap
// returned to the kernel). CPU is user+system time from getrusage(RUSAGE_SELF).
//
// With -seed-etcd it is instead the real server's fast seeder (seed.go).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

var out = json.NewEncoder(os.Stdout)
var outMu sync.Mutex

func emit(v map[string]any) {
	outMu.Lock()
	defer outMu.Unlock()
	if err := out.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "write:", err)
		os.Exit(1)
	}
}

func rssKB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			fields := strings.Fields(line)
			if len(fields) >= 2 {
				kb, _ := strconv.ParseInt(fields[1], 10, 64)
				return kb
			}
		}
	}
	return 0
}

func cpuMicros() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Sec*1e6 + int64(ru.Utime.Usec) + ru.Stime.Sec*1e6 + int64(ru.Stime.Usec)
}

func heapInuseKB() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse / 1024)
}

// counter counts events of one kind once armed and reports when the target is reached.
type counter struct {
	kind    string
	armed   atomic.Bool
	seen    atomic.Int64
	target  atomic.Int64
	cpu0    atomic.Int64
	started atomic.Int64 // unix nanos when armed
}

func (c *counter) arm(n int64) {
	c.seen.Store(0)
	c.target.Store(n)
	c.cpu0.Store(cpuMicros())
	c.started.Store(time.Now().UnixNano())
	c.armed.Store(true)
}

func (c *counter) hit() {
	if !c.armed.Load() {
		return
	}
	if c.seen.Add(1) == c.target.Load() {
		c.armed.Store(false)
		cpu := cpuMicros() - c.cpu0.Load()
		seen := c.seen.Load()
		emit(map[string]any{
			"event": "done", "kind": c.kind, "seen": seen, "cpu_us": cpu,
			"cpu_us_per_event": float64(cpu) / float64(seen),
			"wall_s":           float64(time.Now().UnixNano()-c.started.Load()) / 1e9,
		})
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the server to watch")
	pods := flag.Int("pods", 0, "pods the server holds (for the per-pod figures)")
	contentType := flag.String("content-type", "json",
		"json: application/json (client-go's own default; the fake server speaks JSON only); "+
			"protobuf: application/vnd.kubernetes.protobuf, as Kubernetes' components ask for")
	var seed seedOptions
	flag.StringVar(&seed.etcd, "seed-etcd", "",
		"seed mode (seed.go): write pods up to -pods into the etcd at this URL, cloned from the pods on the server")
	flag.IntVar(&seed.workers, "seed-workers", 16, "seed mode: goroutines writing transactions")
	flag.IntVar(&seed.txnOps, "seed-txn-ops", 1,
		"seed mode: puts per transaction (etcd's --max-txn-ops: 128); above 1 about twice as fast, but the "+
			"pods of a transaction share its revision, i.e. their resourceVersion (through the API every pod has its own)")
	flag.IntVar(&seed.txnMax, "seed-txn-bytes", 1<<20, "seed mode: value bytes per transaction (etcd takes 1.5 MiB)")
	flag.Float64Var(&seed.rate, "seed-rate", 100,
		"seed mode: the clones' creationTimestamps go back from now at this many pods/s (the API path's pace)")
	flag.DurationVar(&seed.timeout, "seed-timeout", 30*time.Minute, "seed mode: give up after this long")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "usage: clientgo -kubeconfig FILE -pods N [-content-type json|protobuf] [-seed-etcd URL]")
		os.Exit(2)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(1)
	}
	switch *contentType {
	case "json":
		cfg.ContentType = "application/json" // the fake server speaks JSON only (as the Python peers do)
	case "protobuf":
		// client-go itself defaults to JSON (rest.Config.ContentType "" means application/json);
		// protobuf is what Kubernetes' own components ask for (--kube-api-content-type)
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	default:
		fmt.Fprintln(os.Stderr, "-content-type must be json or protobuf, got", *contentType)
		os.Exit(2)
	}
	cfg.QPS = 1000
	cfg.Burst = 1000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
	if seed.etcd != "" {
		seed.pods = *pods
		os.Exit(seedEtcd(client, seed))
	}
	updates := &counter{kind: "update"}
	deletes := &counter{kind: "delete"}

	runtime.GC()
	rss0 := rssKB()
	heap0 := heapInuseKB()
	cpuStart := cpuMicros()
	started := time.Now()

	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods()
	informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) {},
		UpdateFunc: func(oldObj, newObj any) { updates.hit() },
		DeleteFunc: func(obj any) { deletes.hit() },
	})
	stop := make(chan struct{})
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			fmt.Fprintln(os.Stderr, "cache did not sync:", typ)
			os.Exit(1)
		}
	}
	syncS := time.Since(started).Seconds()
	syncCPU := cpuMicros() - cpuStart
	held := len(informer.Informer().GetStore().ListKeys())
	runtime.GC()
	rss := rssKB()
	heap := heapInuseKB()
	debug.FreeOSMemory()
	rssReleased := rssKB()
	n := float64(*pods)
	if n == 0 {
		n = float64(held)
	}
	emit(map[string]any{
		"event": "synced", "sync_s": syncS, "sync_cpu_s": float64(syncCPU) / 1e6, "held": held,
		"rss_kb_base": rss0, "rss_kb": rss, "rss_kb_per_pod": float64(rss-rss0) / n,
		"rss_kb_released_per_pod": float64(rssReleased-rss0) / n,
		"heap_kb_per_pod":         float64(heap-heap0) / n,
		"go":                      runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0),
		"content_type": *contentType,
	})

	lister := informer.Lister()
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		words := strings.Fields(scanner.Text())
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "arm":
			target, _ := strconv.ParseInt(words[2], 10, 64)
			if words[1] == "update" {
				updates.arm(target)
			} else {
				deletes.arm(target)
			}
			emit(map[string]any{"event": "armed", "kind": words[1]})
		case "list":
			var times []float64
			var items []*corev1.Pod
			for i := 0; i < 10; i++ {
				t0 := time.Now()
				items, _ = lister.Pods(words[1]).List(labels.Everything())
				times = append(times, time.Since(t0).Seconds()*1000)
			}
			sort.Float64s(times)
			emit(map[string]any{"event": "list", "items": len(items), "list_ns_ms": times[len(times)/2]})
		case "mem":
			runtime.GC()
			emit(map[string]any{
				"event": "mem", "rss_kb_per_pod": float64(rssKB()-rss0) / n,
				"heap_kb_per_pod": float64(heapInuseKB()-heap0) / n,
			})
		case "stop":
			close(stop)
			factory.Shutdown()
			emit(map[string]any{"event": "stopped"})
			return
		}
	}
	close(stop)
	factory.Shutdown()
}
