#!/usr/bin/env bash
# Download the wheels the GPU machine lacks (benchmarks/gpu_wheels.txt) into .whl/ at the repo root:
# cp312 manylinux x86-64 builds, or py3 wheels, of exactly the listed versions, no dependencies.
# Idempotent: wheels already there are kept, wheels of anything not listed (another version, a
# package dropped from the list) are removed, so .whl/ holds one version of each package.
# .whl/ is git-ignored through .git/info/exclude. Usage: bash scripts/gpu_wheels.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
PYTHON="${PYTHON:-python3}"
list=benchmarks/gpu_wheels.txt
dest=.whl

mkdir -p "$dest"
exclude="$(git rev-parse --git-path info/exclude 2>/dev/null || echo .git/info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >>"$exclude"

mapfile -t reqs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
[ "${#reqs[@]}" -gt 0 ] || { echo "no requirements in $list" >&2; exit 1; }

platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
done

# drop wheels that are not in the list (another version, or a package no longer carried)
"$PYTHON" - "$dest" "${reqs[@]}" <<'EOF'
import os, re, sys
dest, reqs = sys.argv[1], sys.argv[2:]
norm = lambda s: re.sub(r"[-_.]+", "_", s).lower()
want = {(norm(n), v) for n, v in (r.split("==", 1) for r in reqs)}
for f in sorted(os.listdir(dest)):
    parts = f.split("-")
    if not f.endswith(".whl") or len(parts) < 3 or (norm(parts[0]), parts[1]) not in want:
        os.remove(os.path.join(dest, f))
        print(f"removed {f}")
EOF

"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d "$dest" "${reqs[@]}" 2>&1 \
    | grep -v "is ignored: it is neither a file nor a directory" || true

# one wheel per listed package, nothing else
"$PYTHON" - "$dest" "${reqs[@]}" <<'EOF'
import os, re, sys
dest, reqs = sys.argv[1], sys.argv[2:]
norm = lambda s: re.sub(r"[-_.]+", "_", s).lower()
have = {}
for f in os.listdir(dest):
    n, v = f.split("-")[:2]
    have.setdefault(norm(n), []).append((v, f))
bad = 0
for r in reqs:
    n, v = r.split("==", 1)
    got = have.get(norm(n), [])
    if [g[0] for g in got] != [v]:
        print(f"missing or duplicated: {r}: {[g[1] for g in got]}", file=sys.stderr)
        bad = 1
extra = set(have) - {norm(r.split("==")[0]) for r in reqs}
if extra:
    print(f"not listed: {sorted(extra)}", file=sys.stderr)
    bad = 1
sys.exit(bad)
EOF

ls -l "$dest"
echo "total: $(du -cb "$dest"/*.whl | tail -1 | cut -f1) bytes ($(du -ch "$dest"/*.whl | tail -1 | cut -f1)) in $(ls "$dest"/*.whl | wc -l) wheels"
