#!/usr/bin/env bash
# Prepare .gpu/ (git-ignored) for scripts/gpu_check.py on a bare GPU box with no network
# (issue 28, docs/gpu.md "Measuring a GPU"): the wheels the box lacks (the kit's whl/ folder,
# ../shared/gpu/whl by default, its old compressbench wheel left out), a fresh compressbench
# wheel of this checkout (pip wheel --no-deps), a git archive of HEAD (commit first: what is
# measured is HEAD) and .gpu/run.sh, the one command to run there:
#     bash .gpu/run.sh            (device tool: carry [".gpu"]; results under $OUT)
# (bash .gpu/run.sh --small rehearses it on a CPU)
# Usage: scripts/gpu_kit.sh [KIT_WHEELS_DIR]
set -euo pipefail
root=$(git rev-parse --show-toplevel)
wheels=${1:-$root/../shared/gpu/whl}
[ -d "$wheels" ] || { echo "no wheel folder $wheels (give the kit's whl/ folder)" >&2; exit 2; }
kit=$root/.gpu
rm -rf "$kit" && mkdir -p "$kit/whl"
find "$wheels" -maxdepth 1 -name '*.whl' ! -name 'compressbench-*' -exec cp {} "$kit/whl/" \;
python -m pip wheel -q --no-deps --no-build-isolation -w "$kit/whl" "$root"
git -C "$root" archive -o "$kit/project.tar.gz" HEAD
git -C "$root" rev-parse HEAD > "$kit/HEAD"
cat > "$kit/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU box, from the checkout's root: install the carried wheels beside the box's torch,
# unpack HEAD, run scripts/gpu_check.py (paper and fast mode), results into $OUT (or .gpu/out).
set -uo pipefail
kit=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$kit/out}; site=/tmp/cb_site; proj=/tmp/cb_proj
mkdir -p "$out"; rm -rf "$site" "$proj"; mkdir -p "$proj"
python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$kit"/whl/*.whl
tar -xzf "$kit/project.tar.gz" -C "$proj"
cd "$proj" || exit 1
export PYTHONPATH="$proj/src:$site" PATH="$site/bin:$PATH" PYTHONUNBUFFERED=1
python3 scripts/gpu_check.py --budget-s "${BUDGET_S:-420}" "$@" 2>&1 | tee "$out/gpu_check.log"
rc=${PIPESTATUS[0]}
cp "$(ls -t benchmarks/results/gpu_check_*.json | head -1)" "$out/"
echo "compressbench $(cat "$kit/HEAD"), gpu_check exit $rc; results in $out"
exit "$rc"
RUN
chmod +x "$kit/run.sh"
du -sh "$kit"
echo "on the GPU box, from the checkout's root: bash .gpu/run.sh   (device: carry [\".gpu\"])"
