#!/usr/bin/env bash
# Run cloudcoil's own test files (imports renamed by rename.py) against this project.
#   ./run.sh fake|real [extra pytest args, e.g. -k crud or tests/test_fluent.py]
# Writes last-<mode>.log (the pytest output, -rA), last-<mode>.xml (JUnit), last-<mode>-leaks.txt
# (threads tests left running) and last-<mode>-summary.md (per-file counts, failures grouped).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mode="${1:-}"
case "$mode" in fake|real) shift ;; *) echo "usage: $0 fake|real [pytest args]" >&2; exit 2 ;; esac
python="${CC_PYTHON:-$here/../../.venv/bin/python}"
cd "$here"

# CC_EDGE_ALIASES=1: rename.py --edge-aliases (see rename.py; results go to last-<mode>-edge-aliases.*)
suffix=""; rename_args=()
if [[ "${CC_EDGE_ALIASES:-0}" == 1 ]]; then suffix="-edge-aliases"; rename_args=(--edge-aliases); fi
# CC_FAKE_PROCESS=1 (fake mode): the fake in a process of its own per test (conftest.py); files last-fake-process.*
if [[ "$mode" == fake && "${CC_FAKE_PROCESS:-0}" == 1 ]]; then suffix="-process$suffix"; fi
python3 rename.py "${rename_args[@]}" >/dev/null || { echo "rename.py failed" >&2; exit 2; }

if [[ "$mode" == real ]]; then
    if ! "$python" -c 'from cloudcoil_cache.testing._real import find_assets; print(find_assets())'; then
        echo "real mode: no kube-apiserver/etcd (set KUBEBUILDER_ASSETS or run tools/real-apiserver/build)" >&2
        exit 2
    fi
fi

files=(tests/test_sync_e2e.py tests/test_async_e2e.py tests/test_resources.py tests/test_fluent.py
       tests/test_config.py tests/test_informers.py tests/test_informers_edge_cases.py)
if [[ $# -gt 0 ]]; then
    case "$1" in tests/*) files=() ;; selftest/*) files=(); suffix="$suffix-selftest" ;; esac
fi

log="$here/last-$mode$suffix.log"; xml="$here/last-$mode$suffix.xml"; leaks="$here/last-$mode$suffix-leaks.txt"
: > "$leaks"
# KUBECONFIG unset: a library fallback to the default config fails loudly instead of reaching another cluster.
env -u KUBECONFIG CC_TARGET="$mode" CC_FAKE_PROCESS="${CC_FAKE_PROCESS:-0}" CC_LEAK_LOG="$leaks" COLUMNS=200 \
    "$python" -m pytest -c "$here/pytest.ini" --rootdir="$here" -q -rA --timeout=60 \
    --junitxml="$xml" "${files[@]}" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
"$python" "$here/summarize.py" "$xml" "$leaks" > "$here/last-$mode$suffix-summary.md" || true
[[ -n "$suffix" ]] && python3 rename.py >/dev/null  # leave tests/ in the faithful form
echo "log: $log  summary: $here/last-$mode$suffix-summary.md  (pytest exit $rc)"
exit "$rc"
