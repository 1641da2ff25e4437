// Seed mode (-seed-etcd URL): write pods straight into kube-apiserver's etcd, as the API server
// would have stored them, to fill a real server with 100,000 pods in seconds instead of an hour.
//
// The pods already on the server are the templates: benchmarks/real_server.py creates the first
// few hundred through the API (POST + status PATCH) and then runs
//
//	clientgo -seed-etcd http://127.0.0.1:PORT -kubeconfig KC -pods 100000
//
// which reads them back through client-go (typed v1.Pod: the server's defaults, managedFields and
// status as stored) and writes pods templates..N-1 into etcd. Pod i is cloned from template
// i mod T (T: the templates, at most 1,024, rounded down to a multiple of 16, so the namespace,
// app, phase, tier and node, which seeded_pod derives from i mod 4/8/2/16, are pod i's), and every field
// that seeded_pod (cloudcoil_cache/testing/data/objects.py) derives from the index itself is
// recomputed for i: the name's suffix, podIP(s), hostIP(s) (also where managedFields key podIPs by
// IP), the image tags, imageIDs, containerIDs, restart counts and timestamps. The server-set
// fields get new values: a random uid, a creationTimestamp (also the time of the API requests'
// managedFields entries) going back from now at -seed-rate pods/s (the API path's pace, so they
// are spread over seconds as that path's are), no resourceVersion (etcd's mod revision is
// the resourceVersion). The pods are the same pods the API path makes, value for value; the seeder
// checks that by re-indexing template j to every other template's index and comparing (so a change
// to seeded_pod that the re-indexing misses fails the seeding instead of skewing the benchmark).
//
// Encoding: what kube-apiserver's storage codec writes for core/v1 (storage media type
// application/vnd.kubernetes.protobuf, the default): the protobuf serializer's "k8s\x00" magic, a
// runtime.Unknown with apiVersion v1 / kind Pod and the Pod's protobuf bytes, under
// /registry/pods/<namespace>/<name> (--etcd-prefix's default), no encryption (identity
// transformer). The seeder checks that too: a template's value read from etcd decodes and
// re-encodes to the same bytes.
//
// Writes: transactions of -seed-txn-ops puts (each under "the key does not exist yet", as the API
// server's creates are; etcd's --max-txn-ops default is 128 and its request limit 1.5 MiB) from
// -seed-workers goroutines. The default is one put per transaction: every pod gets its own etcd
// revision, i.e. its own resourceVersion, as through the API (100 puts a transaction write about
// twice as fast here, 1,700-4,700 pods/s against 1,100-2,200, but 100 pods share each
// resourceVersion string, which a client that shares equal strings holds for less). Then it waits until a consistent LIST (served by the API server's watch
// cache once it has caught up with etcd's revision) counts N pods, GETs a few clones and compares
// them with what was written, and prints one JSON line:
//
//	{"event":"seeded","pods":N,"templates":T,"written":W,"failures":F,"write_s":...,"catchup_s":...,...}
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
)

const etcdPrefix = "/registry" // kube-apiserver's --etcd-prefix default (RealAPIServer sets none)

// maxTemplates: the pods already there that serve as templates (and are checked), at most
const maxTemplates = 1024

// seedOptions are the -seed-* flags.
type seedOptions struct {
	etcd    string
	pods    int
	workers int
	txnOps  int
	txnMax  int // bytes of values per transaction (etcd's --max-request-bytes: 1.5 MiB)
	rate    float64
	timeout time.Duration
}

// tsPy is objects.py's _ts(index, offset): a deterministic timestamp (second resolution).
func tsPy(index, offset int) metav1.Time {
	seconds := (index*37 + offset) % 86400
	return metav1.NewTime(time.Date(2024, 6, 1+index%28, seconds/3600, seconds/60%60, seconds%60, 0, time.UTC))
}

// hexPy is objects.py's _hex(seed, n).
func hexPy(seed string, n int) string {
	sum := sha256.Sum256([]byte(seed))
	return hex.EncodeToString(sum[:])[:n]
}

func podIP(index int) string {
	return fmt.Sprintf("10.%d.%d.%d", index/65536%256, index/256%256, index%256)
}

func hostIP(index int) string {
	return fmt.Sprintf("192.168.%d.%d", index/256%16, index%16+10)
}

// retag replaces an image's "1.<i%7>.<i%13>" tag.
func retag(image string, index int) string {
	if k := strings.LastIndex(image, ":"); k >= 0 {
		return fmt.Sprintf("%s:1.%d.%d", image[:k], index%7, index%13)
	}
	return image
}

// podIndex is the index seeded_pod put at the end of a pod's name ("<app>-<hash>-<index:05d>").
func podIndex(name string) (int, bool) {
	k := strings.LastIndex(name, "-")
	if k < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(name[k+1:])
	return n, err == nil
}

// reindex turns a deep copy of template (a seeded pod read from the server) into seeded pod
// index: everything seeded_pod derives from the index, recomputed. created is the time the
// API server would have stamped (creationTimestamp and the entries of the API requests themselves
// in managedFields); uid its uid.
func reindex(template *corev1.Pod, index int, uid types.UID, created metav1.Time) *corev1.Pod {
	pod := template.DeepCopy()
	name := pod.Name
	if k := strings.LastIndex(name, "-"); k >= 0 {
		name = name[:k]
	}
	pod.Name = fmt.Sprintf("%s-%05d", name, index)
	pod.UID = uid
	pod.ResourceVersion = ""
	pod.CreationTimestamp = created
	templateCreated := template.CreationTimestamp.Time
	for k := range pod.ManagedFields {
		// (kube-apiserver 1.33 replaces the managedFields seeded_pod sends on create with the
		// requests' own entries; the first two cases are for a server that keeps them)
		entry := &pod.ManagedFields[k]
		switch {
		case entry.Manager == "kube-controller-manager":
			t := tsPy(index, 0)
			entry.Time = &t
		case entry.Manager == "kubelet":
			t := tsPy(index, 30)
			entry.Time = &t
		case entry.Time != nil && !entry.Time.Time.Before(templateCreated):
			// written by the seeding requests themselves (the POST's and the status PATCH's manager)
			t := created
			entry.Time = &t
		}
	}
	for k := range pod.Spec.Containers {
		pod.Spec.Containers[k].Image = retag(pod.Spec.Containers[k].Image, index)
	}
	st := &pod.Status
	running := st.Phase == corev1.PodRunning
	// the status PATCH's managedFields entry keys podIPs (and hostIPs) by IP: k:{"ip":"10.0.0.1"}
	var ips []string
	if st.PodIP != "" {
		ips = append(ips, `\"ip\":\"`+st.PodIP+`\"`, `\"ip\":\"`+podIP(index)+`\"`)
	}
	if st.HostIP != "" {
		ips = append(ips, `\"ip\":\"`+st.HostIP+`\"`, `\"ip\":\"`+hostIP(index)+`\"`)
	}
	if len(ips) > 0 {
		replacer := strings.NewReplacer(ips...)
		for k := range pod.ManagedFields {
			if f := pod.ManagedFields[k].FieldsV1; f != nil {
				f.Raw = []byte(replacer.Replace(string(f.Raw)))
			}
		}
	}
	if st.PodIP != "" {
		st.PodIP = podIP(index)
	}
	for k := range st.PodIPs {
		st.PodIPs[k].IP = podIP(index)
	}
	if st.HostIP != "" {
		st.HostIP = hostIP(index)
	}
	for k := range st.HostIPs {
		st.HostIPs[k].IP = hostIP(index)
	}
	if st.StartTime != nil {
		t := tsPy(index, 10)
		st.StartTime = &t
	}
	for k := range st.Conditions {
		// objects.py: the k-th condition's lastTransitionTime is _ts(index, 5k), in this order
		offsets := map[corev1.PodConditionType]int{
			"PodReadyToStartContainers": 0, corev1.PodInitialized: 5, corev1.PodReady: 10,
			corev1.ContainersReady: 15, corev1.PodScheduled: 20,
		}
		if off, ok := offsets[st.Conditions[k].Type]; ok {
			st.Conditions[k].LastTransitionTime = tsPy(index, off)
		}
	}
	app := pod.Labels["app.kubernetes.io/name"]
	for k := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[k]
		cs.Image = retag(cs.Image, index)
		if at := strings.Index(cs.ImageID, "@sha256:"); at >= 0 {
			cs.ImageID = cs.ImageID[:at] + "@sha256:" + hexPy(cs.Name+strconv.Itoa(index), 64)
		}
		if running && cs.ContainerID != "" {
			cs.ContainerID = "containerd://" + hexPy(app+cs.Name+strconv.Itoa(index), 64)
		}
		cs.RestartCount = int32(index % 3)
		if cs.State.Running != nil {
			cs.State.Running.StartedAt = tsPy(index, 20)
		}
	}
	return pod
}

// normalize clears what differs between two pods seeded the same way at different times.
func normalize(pod *corev1.Pod) *corev1.Pod {
	pod = pod.DeepCopy()
	pod.UID, pod.ResourceVersion, pod.CreationTimestamp = "", "", metav1.Time{}
	for k := range pod.ManagedFields {
		if m := pod.ManagedFields[k].Manager; m != "kube-controller-manager" && m != "kubelet" {
			pod.ManagedFields[k].Time = nil
		}
	}
	return pod
}

func seedFail(format string, args ...any) int {
	fmt.Fprintf(os.Stderr, "seed-etcd: "+format+"\n", args...)
	return 1
}

func seedEtcd(client *kubernetes.Clientset, opt seedOptions) int {
	ctx, cancel := context.WithTimeout(context.Background(), opt.timeout)
	defer cancel()
	started := time.Now()

	// 1. the templates, as the server stores them
	var listed []corev1.Pod
	cont := ""
	for {
		page, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			return seedFail("listing the templates: %v", err)
		}
		listed = append(listed, page.Items...)
		if cont = page.Continue; cont == "" {
			break
		}
	}
	byIndex := map[int]*corev1.Pod{}
	for k := range listed {
		if n, ok := podIndex(listed[k].Name); ok {
			byIndex[n] = &listed[k]
		}
	}
	contiguous := 0
	for byIndex[contiguous] != nil {
		contiguous++
	}
	if contiguous != len(listed) {
		return seedFail("the server holds %d pods, not the seeded pods 0..N-1 (%d of them contiguous)",
			len(listed), contiguous)
	}
	t := min(contiguous, maxTemplates) / 16 * 16
	if t < 16 {
		return seedFail("need at least 16 templates created through the API, found %d", contiguous)
	}
	templates := make([]*corev1.Pod, t)
	for k := range templates {
		templates[k] = byIndex[k]
	}
	if opt.pods < contiguous {
		return seedFail("-pods %d is less than the %d pods already there", opt.pods, contiguous)
	}

	// 2. the cloning is exact: template j re-indexed to i is template i (for every template i >= 16)
	mismatches := 0
	for i := 16; i < min(contiguous, maxTemplates); i++ {
		want := byIndex[i]
		got := reindex(templates[i%16], i, want.UID, want.CreationTimestamp)
		if !equality.Semantic.DeepEqual(normalize(got), normalize(want)) {
			if mismatches == 0 {
				fmt.Fprintf(os.Stderr, "seed-etcd: template %d re-indexed to %d differs from pod %d (-clone +server):\n%s\n",
					i%16, i, i, cmp.Diff(normalize(got), normalize(want)))
			}
			mismatches++
		}
	}
	if mismatches > 0 {
		return seedFail("%d of %d templates are not what re-indexing another template gives", mismatches, min(contiguous, maxTemplates)-16)
	}

	// 3. the encoding is the API server's: a template's stored bytes decode and re-encode identically
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{opt.etcd}, DialTimeout: 10 * time.Second,
		MaxCallSendMsgSize: 2 << 20,
	})
	if err != nil {
		return seedFail("etcd client: %v", err)
	}
	defer cli.Close()
	serializer := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	encode := func(pod *corev1.Pod) ([]byte, error) {
		pod.APIVersion, pod.Kind = "v1", "Pod" // the storage codec's target version (core/v1)
		var buf bytes.Buffer
		err := serializer.Encode(pod, &buf)
		return buf.Bytes(), err
	}
	key := func(pod *corev1.Pod) string {
		return etcdPrefix + "/pods/" + pod.Namespace + "/" + pod.Name
	}
	checked := 0
	for _, i := range []int{0, 1, contiguous - 1} {
		stored, err := cli.Get(ctx, key(byIndex[i]))
		if err != nil || len(stored.Kvs) != 1 {
			return seedFail("reading template %d from etcd at %s: %v (%d keys)", i, key(byIndex[i]), err, len(stored.Kvs))
		}
		value := stored.Kvs[0].Value
		if !bytes.HasPrefix(value, []byte("k8s\x00")) {
			return seedFail("template %d is not stored as protobuf (value starts %q)", i, value[:min(16, len(value))])
		}
		decoded := &corev1.Pod{}
		if _, _, err := serializer.Decode(value, nil, decoded); err != nil {
			return seedFail("decoding template %d from etcd: %v", i, err)
		}
		again, err := encode(decoded)
		if err != nil {
			return seedFail("encoding: %v", err)
		}
		if !bytes.Equal(again, value) {
			return seedFail("template %d: re-encoding its stored value gives other bytes (%d vs %d)", i, len(again), len(value))
		}
		checked++
	}
	templatesS := time.Since(started).Seconds()

	// 4. write pods contiguous..N-1, created (as far as their timestamps tell) at -seed-rate pods/s
	// up to now, as the API path would have, not all in one second
	now := time.Now()
	createdAt := func(i int) metav1.Time {
		back := time.Duration(float64(opt.pods-1-i) / opt.rate * float64(time.Second))
		return metav1.NewTime(now.Add(-back).Truncate(time.Second))
	}
	type item struct {
		key   string
		value []byte
	}
	jobs := make(chan int, opt.workers*2)
	var written, failures, bytesOut atomic.Int64
	var lastRev atomic.Int64
	var firstErr atomic.Value
	batchSize := opt.txnOps
	writeStart := time.Now()
	var wg sync.WaitGroup
	flush := func(batch []item) {
		if len(batch) == 0 {
			return
		}
		cmps := make([]clientv3.Cmp, len(batch))
		puts := make([]clientv3.Op, len(batch))
		for k, it := range batch {
			cmps[k] = clientv3.Compare(clientv3.ModRevision(it.key), "=", 0)
			puts[k] = clientv3.OpPut(it.key, string(it.value))
		}
		resp, err := cli.Txn(ctx).If(cmps...).Then(puts...).Commit()
		if err != nil || !resp.Succeeded {
			failures.Add(int64(len(batch)))
			if err == nil {
				err = fmt.Errorf("a key of the batch already exists")
			}
			firstErr.CompareAndSwap(nil, err.Error())
			return
		}
		written.Add(int64(len(batch)))
		for {
			old := lastRev.Load()
			if resp.Header.Revision <= old || lastRev.CompareAndSwap(old, resp.Header.Revision) {
				break
			}
		}
	}
	for w := 0; w < opt.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var batch []item
			size := 0
			for start := range jobs {
				for i := start; i < min(start+batchSize, opt.pods); i++ {
					pod := reindex(templates[i%t], i, types.UID(uuid.New().String()), createdAt(i))
					value, err := encode(pod)
					if err != nil {
						failures.Add(1)
						firstErr.CompareAndSwap(nil, err.Error())
						continue
					}
					if size+len(value) > opt.txnMax {
						flush(batch)
						batch, size = nil, 0
					}
					batch = append(batch, item{key(pod), value})
					size += len(value)
					bytesOut.Add(int64(len(value)))
				}
				flush(batch)
				batch, size = nil, 0
			}
		}()
	}
	for start := contiguous; start < opt.pods; start += batchSize {
		jobs <- start
	}
	close(jobs)
	wg.Wait()
	writeS := time.Since(writeStart).Seconds()
	if f := failures.Load(); f > 0 {
		return seedFail("%d of %d pods not written; first error: %v", f, opt.pods-contiguous, firstErr.Load())
	}

	// 5. wait until the API server serves them: a consistent LIST (the watch cache, once it has seen
	// etcd's current revision) counts N
	catchStart := time.Now()
	count := 0
	for {
		page, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return seedFail("counting: %v", err)
		}
		count = len(page.Items)
		if page.RemainingItemCount != nil {
			count += int(*page.RemainingItemCount)
		}
		if count == opt.pods {
			break
		}
		if ctx.Err() != nil {
			return seedFail("the API server counts %d pods, not %d", count, opt.pods)
		}
		time.Sleep(200 * time.Millisecond)
	}
	catchupS := time.Since(catchStart).Seconds()

	// 6. a few clones read back through the API are what was written (and their templates' look)
	samples := []int{}
	if opt.pods > contiguous {
		for _, i := range []int{contiguous, contiguous + 1, (contiguous + opt.pods) / 2, opt.pods - 1} {
			if i >= contiguous && i < opt.pods {
				samples = append(samples, i)
			}
		}
	}
	sort.Ints(samples)
	for _, i := range samples {
		created := createdAt(i)
		want := reindex(templates[i%t], i, "", created)
		got, err := client.CoreV1().Pods(want.Namespace).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			return seedFail("GET clone %d (%s/%s): %v", i, want.Namespace, want.Name, err)
		}
		if got.UID == "" || got.ResourceVersion == "" || !got.CreationTimestamp.Equal(&created) {
			return seedFail("clone %d: uid %q, resourceVersion %q, creationTimestamp %v", i, got.UID, got.ResourceVersion, got.CreationTimestamp)
		}
		if !equality.Semantic.DeepEqual(normalize(got), normalize(want)) {
			fmt.Fprintf(os.Stderr, "seed-etcd: clone %d differs (-written +served):\n%s\n", i, cmp.Diff(normalize(want), normalize(got)))
			return seedFail("clone %d read back through the API is not what was written", i)
		}
	}
	n := float64(written.Load())
	emit(map[string]any{
		"event": "seeded", "pods": count, "templates": contiguous, "template_period": t,
		"written": written.Load(), "failures": failures.Load(), "revision": lastRev.Load(),
		"value_bytes_avg": float64(bytesOut.Load()) / max(n, 1),
		"templates_s":     templatesS, "write_s": writeS, "write_per_s": n / max(writeS, 1e-9),
		"catchup_s": catchupS, "total_s": time.Since(started).Seconds(),
		"checked_encoding": checked, "checked_reindex": min(contiguous, maxTemplates) - 16, "checked_clones": len(samples),
		"workers": opt.workers, "txn_ops": opt.txnOps,
	})
	return 0
}
