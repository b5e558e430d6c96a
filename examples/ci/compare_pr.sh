#!/usr/bin/env bash
# A pull request's evaluation, the same steps in CI (github-actions.yml, gitlab-ci.yml) and here:
#
#   bash examples/ci/compare_pr.sh      # the bundled example: the candidate's retrieval lost gold
#                                       # passages, so the gate fails (exit 1); the reports are written anyway
#
# 1. main's results: read from the cache when main's input, the config and the localeval version
#    are the ones they were scored with (the key is their SHA-256), else scored again;
# 2. the candidate (this change's pipeline output) is scored;
# 3. localeval compare reads the gate from the config and writes the Markdown (the pull-request
#    comment), the JSON, JUnit XML and the HTML page into $REPORTS.
# Exit code: compare's (0 gate passed, 1 gate failed, 2 bad input or a gate refused); the reports
# are written in every case where compare could read the two runs.
#
# Environment (each optional):
#   BASE_INPUT       main's pipeline output, JSON Lines (default: examples/ci/base.jsonl)
#   CANDIDATE_INPUT  this change's pipeline output (default: examples/ci/candidate.jsonl)
#   LOCALEVAL_CONFIG the metrics and the gate (default: examples/ci/localeval.toml)
#   REPORTS          where the reports go (default: ./localeval-reports)
#   LOCALEVAL_HOME   localeval's cache folder, models and main's results (default: ~/.cache/localeval)
#   LOCALEVAL        the command to run (default: localeval)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
base_input="${BASE_INPUT:-$here/base.jsonl}"
candidate_input="${CANDIDATE_INPUT:-$here/candidate.jsonl}"
config="${LOCALEVAL_CONFIG:-$here/localeval.toml}"
reports="${REPORTS:-localeval-reports}"
cache="${LOCALEVAL_HOME:-$HOME/.cache/localeval}/base-results"
read -r -a localeval <<< "${LOCALEVAL:-localeval}"

sha() { sha256sum "$@" 2>/dev/null || shasum -a 256 "$@"; }  # Linux, macOS

mkdir -p "$reports" "$cache" || exit 2
version="$("${localeval[@]}" --version)" || exit 2
key="$({ sha < "$base_input" && sha < "$config" && echo "$version"; } | sha | cut -c1-24)" || exit 2
base_results="$cache/base-$key.results.jsonl"

if [ -s "$base_results" ]; then
  echo "localeval-ci: main's results from the cache ($base_results)" >&2
else
  echo "localeval-ci: scoring main's output $base_input" >&2
  "${localeval[@]}" score "$base_input" --config "$config" -o "$base_results.partial" -q || exit $?
  mv "$base_results.partial" "$base_results" || exit 2
fi
cp "$base_results" "$reports/base.results.jsonl" || exit 2

echo "localeval-ci: scoring the candidate $candidate_input" >&2
"${localeval[@]}" score "$candidate_input" --config "$config" -o "$reports/candidate.results.jsonl" -q || exit $?

"${localeval[@]}" compare "$reports/base.results.jsonl" "$reports/candidate.results.jsonl" --config "$config" -q \
  --markdown "$reports/compare.md" --json "$reports/compare.json" --junit-xml "$reports/compare.junit.xml" --html "$reports/compare.html"
status=$?
echo "localeval-ci: compare exit code $status; reports in $reports" >&2
exit "$status"
