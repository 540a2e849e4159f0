#!/usr/bin/env bash
# Refreshes the locks behind README lines 1 and 2 and the jobs' conda environment, from pyproject.toml
# and the releases PyPI held before a given day (UTC; default today):
#   requirements/pipeline.txt   README line 1: the core and the `pipeline` extra, and the build backend
#   requirements/test.txt       README line 2: the same with the `test` extra
#   envs/rejectopt.yaml         the jobs' `--sdm conda` environment, pinned to the same versions
# Usage: bash requirements/lock.sh [YYYY-MM-DD]
#
# The day is the whole input besides pyproject.toml: uv resolves with --exclude-newer at that day's
# start and --upgrade (the files already here are not consulted), so two runs with the same day give the
# same files. One resolution (--fork-strategy fewest) serves every Python from 3.11, the oldest the
# pipeline extra supports (Snakemake 9): the same versions, and so the same numbers, on each. The
# pipeline lock is resolved under the test lock's versions, so both lines install the same releases.
# Each file is written in full to a scratch folder first and moved into place only when all are done.
set -euo pipefail
cd "$(dirname "$0")/.."

day="${1:-$(date -u +%F)}"
if ! [[ "$day" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] || ! date -u -d "$day" +%F >/dev/null 2>&1; then
  echo "lock.sh: '$day' is not a day as YYYY-MM-DD (usage: bash requirements/lock.sh [YYYY-MM-DD])" >&2
  exit 2
fi
# The tools are pinned: another uv may write the same resolution differently.
uv_version=0.13.9
packaging_version=26.2
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "lock.sh: needs python3 >= 3.11 (tomllib reads pyproject.toml); found $(python3 --version 2>&1)" >&2
  exit 2
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
echo "lock.sh: installing uv $uv_version in a scratch environment" >&2
python3 -m venv "$scratch/tool"
"$scratch/tool/bin/pip" install --quiet "uv==$uv_version" "packaging==$packaging_version"
uv="$scratch/tool/bin/uv"
inputs=("$scratch/tool/bin/python" requirements/lock_inputs.py)

# The build backend ([build-system] requires), so that `pip install --no-build-isolation -e .` builds the
# package with a locked setuptools too.
"${inputs[@]}" build-system > "$scratch/build.in"

compile=("$uv" pip compile --quiet --universal --python-version 3.11 --fork-strategy fewest --generate-hashes
         --upgrade --exclude-newer "$day" --custom-compile-command "bash requirements/lock.sh $day")
echo "lock.sh: resolving the releases published before $day" >&2
"${compile[@]}" pyproject.toml "$scratch/build.in" --extra pipeline --extra test -o "$scratch/test.txt"
"${compile[@]}" pyproject.toml "$scratch/build.in" --extra pipeline -c "$scratch/test.txt" -o "$scratch/pipeline.txt"
# uv names the scratch files in its "# via" comments; the locks name what they stand for instead.
sed -i -e "s|$scratch/build.in|[build-system] requires|" -e "s|$scratch/test.txt|requirements/test.txt|" \
  "$scratch/test.txt" "$scratch/pipeline.txt"
"${inputs[@]}" conda-env "$scratch/test.txt" > "$scratch/rejectopt.yaml"

"${inputs[@]}" changes requirements/test.txt "$scratch/test.txt" "$day"
mv "$scratch/test.txt" requirements/test.txt
mv "$scratch/pipeline.txt" requirements/pipeline.txt
mv "$scratch/rejectopt.yaml" envs/rejectopt.yaml
echo "lock.sh: wrote requirements/test.txt, requirements/pipeline.txt and envs/rejectopt.yaml" >&2
