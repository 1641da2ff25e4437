"""The longest pause a 10,000-pod relist (resync) causes in another thread, without HTTP: decode the
pods, then time ``Informer.replace`` while a probe thread wakes every millisecond.

Run: .venv/bin/python benchmarks/relist_pause.py
"""
import threading
import time
import gc
from cloudcoil_cache.caching import Informer, InformerKey, Tuning
from cloudcoil_cache.models.kubernetes.core.v1 import Pod
from cloudcoil_cache.testing import make_pod, FakeListWatch
from cloudcoil_cache import _json
raw = [_json.dumps(make_pod(f"p{i}", f"ns{i%4}", index=i)) for i in range(10000)]
def decode():
    out = []
    for i, r in enumerate(raw):
        p = Pod.from_dict_sealed(_json.loads(r)); object.__setattr__(p.metadata, "resource_version", str(i+1)); out.append(p)
    return out
src = FakeListWatch()
inf = Informer(InformerKey(Pod, None), lambda k: src, tuning=Tuning(freeze_gc=False))
inf.start(); inf.wait_for_sync(5)
inf.replace(decode(), "1", resync=False, generation=inf._generation)
gc.freeze()
for rnd in range(3):
    items = decode()
    gaps = []; stop = threading.Event()
    def probe():
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001); now = time.perf_counter(); gaps.append(now-last); last = now
    t = threading.Thread(target=probe); t.start(); time.sleep(0.05)
    t0=time.perf_counter()
    inf.replace(items, "2", resync=True, generation=inf._generation)
    del items
    t1=time.perf_counter()
    time.sleep(0.05); stop.set(); t.join()
    print(f"replace {1000*(t1-t0):.0f} ms, max gap {1000*max(gaps):.1f} ms")
inf.stop()
