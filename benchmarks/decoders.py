"""The README's performance table: this library with each JSON decoder beside client-go, fresh processes, rounds.

One command regenerates the table (``README.md`` "Performance", ``docs/performance.md``)::

    pip install -e '.[bench]'                      # orjson and matplotlib come with it
    python benchmarks/decoders.py --rounds 3       # ~6 min on 2 cores; + --python-peers (minutes more)

Each round runs, each in a fresh process against a fresh fake API server (``peers.py --fresh``):
client-go (``benchmarks/clientgo``, built once), then this library with the standard library's
``json`` (orjson hidden from it: the pure-Python path, as installed without orjson), then with
``orjson``. In each process, after the sync: the two floors, paginated GET (limit 500) +
``json.loads`` and + ``orjson.loads``, the GC off, nothing kept. Every ratio is taken within one
process or one round (same server build, same minute) and the median over the rounds is printed;
the machine's load (``os.getloadavg()``) before and after each process is recorded with it.

Before each sync the harness reads the whole list once and drops it (the fake server encodes each
object on its first LIST: that is server work, and the floors, run later in the process, never pay
it). Written to ``results/decoders.json`` and ``results/decoders.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402
import run  # noqa: E402  (the peers' virtualenv, the RESULT line reader)

#: (column, library, decoder): the order of a round
PLAN: list[tuple[str, str, str | None]] = [
    ("client-go", "client-go", None),
    ("cloudcoil_cache (json)", "cloudcoil_cache", "json"),
    ("cloudcoil_cache (orjson)", "cloudcoil_cache", "orjson"),
]
PYTHON_PEERS: list[tuple[str, str, str | None]] = [
    ("kubernetes", "kubernetes", None),
    ("cloudcoil", "cloudcoil", None),
]


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def one(python: str, library: str, decoder: str | None, pods: int, events: int, warm: bool = True) -> dict[str, Any]:
    command = [python, str(HERE / "peers.py"), "--library", library, "--pods", str(pods), "--events", str(events)]
    command += ["--server-python", sys.executable, "--fresh", "--no-trace", *(["--warm"] if warm else [])]
    command += ["--decoder", decoder] if decoder else []
    return run._subprocess_json(command, timeout=3600)


def _median(rows: list[dict[str, Any]], get: Any) -> float | None:
    values = []
    for row in rows:
        try:
            values.append(get(row))
        except (KeyError, TypeError, ZeroDivisionError):
            continue
    return statistics.median(values) if values else None


def summarise(rounds: list[dict[str, dict[str, Any]]], columns: list[str]) -> dict[str, dict[str, Any]]:
    """Medians per column over the rounds; ratios to client-go's sync within each round."""
    out: dict[str, dict[str, Any]] = {}
    for column in columns:
        rows = [r[column] for r in rounds if column in r and "sync_s" in r[column]]
        if not rows:
            errors = [r[column].get("error") or r[column].get("skipped") for r in rounds if column in r]
            out[column] = {"error": next((e for e in errors if e), "no result")}
            continue
        peer_rounds = [
            r for r in rounds if column in r and "sync_s" in r[column] and "sync_s" in r.get("client-go", {})
        ]
        out[column] = {
            "rounds": len(rows),
            "version": rows[0].get("version", ""),
            "decoder": rows[0].get("decoder"),
            "sync_s": _median(rows, lambda r: r["sync_s"]),
            "sync_cpu_s": _median(rows, lambda r: r["sync_cpu_s"]),
            "held": min(r.get("held", 0) for r in rows),
            "pods": rows[0]["pods"],
            "floor_s": _median(rows, lambda r: r["floor_s"]),
            "orjson_floor_s": _median(rows, lambda r: r["orjson_floor_s"]),
            "x_floor": _median(rows, lambda r: r["sync_s"] / r["floor_s"]),
            "x_orjson_floor": _median(rows, lambda r: r["sync_s"] / r["orjson_floor_s"]),
            "cpu_x_floor_cpu": _median(rows, lambda r: r["sync_cpu_s"] / r["floor_cpu_s"]),
            "x_clientgo": _median(peer_rounds, lambda r: r[column]["sync_s"] / r["client-go"]["sync_s"]),
            "cpu_x_clientgo": _median(peer_rounds, lambda r: r[column]["sync_cpu_s"] / r["client-go"]["sync_cpu_s"]),
            "rss_kb_per_pod": _median(rows, lambda r: r["rss_kb_per_pod"]),
            "burst_per_s": _median(rows, lambda r: r["burst_per_s"]),
            "burst_cpu_us_per_event": _median(rows, lambda r: r["burst_cpu_us_per_event"]),
            "list_ns_ms": _median(rows, lambda r: r["list_ns_ms"]),
            "list_ns_items": rows[0].get("list_ns_items"),
            "loads": [[r.get("load_before"), r.get("load_after")] for r in rows],
        }
    clientgo_rss = (out.get("client-go") or {}).get("rss_kb_per_pod")
    for row in out.values():
        if clientgo_rss and row.get("rss_kb_per_pod"):
            row["rss_x_clientgo"] = row["rss_kb_per_pod"] / clientgo_rss
    return out


def _f(value: Any, spec: str, suffix: str = "") -> str:
    return "–" if value is None else format(value, spec) + suffix


def table(data: dict[str, Any]) -> str:
    """The README's table: one column per library (and decoder), one row per figure."""
    summary = data["summary"]
    columns = [c for c in data["columns"] if c in summary]
    pods = data["pods"]

    def head(column: str) -> str:
        row = summary[column]
        name = column if "error" in row else f"{column.split(' (')[0]} {row['version']}".strip()
        if column.startswith("cloudcoil_cache"):
            name = f"**cloudcoil_cache** ({row.get('decoder') or column.split('(')[-1].rstrip(')')})"
        return {"kubernetes": f"{name} `SharedInformer`", "cloudcoil": f"{name} `Cache`"}.get(column, name)

    def cells(get: Any) -> str:
        return " | ".join("–" if "error" in summary[c] else get(summary[c]) for c in columns)

    lines = [
        f"| {pods:,} pods | " + " | ".join(head(c) for c in columns) + " |",
        "|---|" + "---|" * len(columns),
        "| sync (median of rounds) | "
        + cells(lambda r: f"{r['sync_s']:.2f} s" + ("" if r["held"] >= r["pods"] else f" (holds {r['held']:,})"))
        + " |",
        "| sync ÷ floor (GET + `json.loads`, GC off) | " + cells(lambda r: _f(r["x_floor"], ".2f", "×")) + " |",
        "| sync ÷ orjson floor (GET + `orjson.loads`, GC off) | "
        + cells(lambda r: _f(r["x_orjson_floor"], ".2f", "×"))
        + " |",
        "| sync ÷ client-go's (same round) | " + cells(lambda r: _f(r.get("x_clientgo"), ".2f", "×")) + " |",
        "| sync CPU (client process) | " + cells(lambda r: _f(r["sync_cpu_s"], ".2f", " s")) + " |",
        "| sync CPU ÷ floor's CPU (`json.loads`) | " + cells(lambda r: _f(r["cpu_x_floor_cpu"], ".2f", "×")) + " |",
        "| sync CPU ÷ client-go's (same round) | " + cells(lambda r: _f(r.get("cpu_x_clientgo"), ".2f", "×")) + " |",
        "| RSS per cached pod (fresh process) | " + cells(lambda r: _f(r["rss_kb_per_pod"], ".1f", " KB")) + " |",
        f"| MODIFIED burst ({data['events']:,}) applied | "
        + cells(lambda r: _f(r["burst_per_s"], ",.0f", "/s"))
        + " |",
        "| client CPU per event | " + cells(lambda r: _f(r["burst_cpu_us_per_event"], ".0f", " µs")) + " |",
        f"| list one namespace ({next(iter(summary.values())).get('list_ns_items') or '–'} pods) | "
        + cells(lambda r: _f(r["list_ns_ms"], ".2f", " ms"))
        + " |",
    ]
    return "\n".join(lines)


def caption(data: dict[str, Any]) -> str:
    return (
        f"`{data['command']}` — {data['when']}, python {data['python']}, orjson {data['orjson'] or 'not installed'}, "
        f"{data['cpus']} CPUs, load (1/5/15 min) before {data['load_before']}, after {data['load_after']}; "
        f"medians of {data['rounds']} rounds, each library in a fresh process against a fresh fake API server. "
        "Decoder: (json) is the standard library's (orjson hidden from the library), (orjson) is orjson; "
        "client-go decodes with Go's encoding/json."
        + ("" if data.get("warm", True) else " Cold: no warm-up read, each sync includes the server's first encoding.")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=5_000, help="MODIFIED events per burst")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python-peers", action="store_true", help="also kubernetes and cloudcoil 0.6.0 (one round)")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--render", action="store_true", help="only print the table of OUT/decoders.json")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="no warm-up read: each sync also waits for the fake server's first encoding of every object",
    )
    args = parser.parse_args()
    if args.render:
        data = json.loads((args.out / "decoders.json").read_text())
        print(caption(data) + "\n\n" + table(data))
        return
    try:
        import orjson

        orjson_version: str | None = orjson.__version__
    except ImportError:
        orjson_version = None
    data: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/decoders.py " + " ".join(sys.argv[1:]),
        "python": sys.version.split()[0],
        "orjson": orjson_version,
        "cpus": os.cpu_count(),
        "pods": args.pods,
        "events": args.events,
        "rounds": args.rounds,
        "load_before": _load(),
        "warm": not args.cold,
    }
    print(f"python {data['python']}, orjson {orjson_version}, {data['cpus']} CPUs, load {data['load_before']}")
    binary, why = peers.build_clientgo()
    plan = list(PLAN)
    if orjson_version is None:
        print("orjson is not installed (pip install -e '.[bench]'): the (orjson) column is skipped", flush=True)
        plan = [p for p in plan if p[2] != "orjson"]
    rounds: list[dict[str, dict[str, Any]]] = []
    extra: dict[str, dict[str, Any]] = {}
    if args.python_peers:
        python, reason = run._peers_python()
        for column, library, decoder in PYTHON_PEERS:
            extra[column] = (
                one(python, library, decoder, args.pods, args.events, not args.cold) if python else {"skipped": reason}
            )
            print(f"{column:26s} {_brief(extra[column])}  load {_load()}", flush=True)
    for k in range(args.rounds):
        got: dict[str, dict[str, Any]] = dict(extra) if k == 0 else {}
        for column, library, decoder in plan:
            if library == "client-go" and binary is None:
                got[column] = {"skipped": why}
            else:
                got[column] = one(sys.executable, library, decoder, args.pods, args.events, not args.cold)
            print(f"round {k + 1} {column:26s} {_brief(got[column])}  load {_load()}", flush=True)
        rounds.append(got)
    data["load_after"] = _load()
    data["columns"] = [c for c, _, _ in PYTHON_PEERS if c in extra] + [c for c, _, _ in plan]
    data["rounds_raw"] = rounds
    data["summary"] = summarise(rounds, data["columns"])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "decoders.json").write_text(json.dumps(data, indent=1))
    text = caption(data) + "\n\n" + table(data) + "\n"
    (args.out / "decoders.md").write_text("# Sync with each decoder, beside client-go\n\n" + text)
    print("\n" + text)
    print(f"wrote {args.out}/decoders.json, decoders.md", flush=True)


def _brief(row: dict[str, Any]) -> str:
    if "sync_s" not in row:
        return str(row.get("error") or row.get("skipped"))
    return (
        f"sync {row['sync_s']:.2f} s (CPU {row.get('sync_cpu_s') or 0:.2f}), floors {row['floor_s']:.2f} / "
        f"{row.get('orjson_floor_s', float('nan')):.2f} s = {row['sync_s'] / row['floor_s']:.2f}x / "
        f"{row['sync_s'] / row.get('orjson_floor_s', float('nan')):.2f}x, RSS {row['rss_kb_per_pod']:.1f} KB/pod, "
        f"burst {row['burst_per_s']:,.0f}/s {row['burst_cpu_us_per_event']:.0f} µs/event"
    )


if __name__ == "__main__":
    main()
