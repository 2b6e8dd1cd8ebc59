#!/usr/bin/env bash
# selene's training half on a GPU machine that has python3 with torch but no package registry.
#
#   bash benchmarks/gpu_check.sh --prepare        # here (with the registry): wheels into .whl/, token data into .gpu/
#   bash benchmarks/gpu_check.sh [--budget 480]   # there: install .whl/ into a private folder, run benchmarks/gpu_check.py
#
# Everything after the script's own flags goes to benchmarks/gpu_check.py (--cpu-smoke runs it here).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [[ "${1:-}" == "--prepare" ]]; then
    bash scripts/gpu_wheels.sh
    if [[ ! -f .gpu/tokens/manifest.json ]]; then
        # the sample corpus through tokenize: the token data the GPU run trains on (nothing rebuilt there)
        PY="${PYTHON:-.venv/bin/python}"
        SELENE_PREFECT=off "$PY" -c "from selene.cli import entrypoint; entrypoint()" run configs/demo.yaml --until tokenize
        mkdir -p .gpu
        rm -rf .gpu/tokens
        cp -r runs/demo/tokenize .gpu/tokens
    fi
    grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
    du -sh .whl .gpu
    exit 0
fi

PYTHON="${PYTHON:-python3}"
if [[ -d .whl ]] && compgen -G ".whl/*.whl" > /dev/null; then
    SITE="${SELENE_GPU_SITE:-/tmp/selene-site}"
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
exec "$PYTHON" benchmarks/gpu_check.py "$@"
