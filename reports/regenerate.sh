#!/usr/bin/env bash
# Regenerate the committed example reports, from the repository root:
#   sh reports/regenerate.sh            # the KTH example (seconds; what the tests check)
#   sh reports/regenerate.sh all        # also MetaCentrum, wagap and DFRS (tens of minutes;
#                                       # needs ../shared/workloads)
# Each command is the one reports/README.md documents for its folder.
set -eu
cd "$(dirname "$0")/.."
queuesim compare site-configs/kth-sp2.yaml --workload workloads/kth-sp2-sample.swf \
    --policy easy --policy fcfs --policy conservative --jobs-format csv \
    --out reports/kth-sp2-policies --quiet
[ "${1:-}" = all ] || exit 0
setups="site-configs/metacentrum-historic.yaml site-configs/metacentrum-conservative.yaml site-configs/metacentrum-complex.yaml"
for trace in METACENTRUM-2009-2 wagap-2013; do
    folder=metacentrum-2009
    more=""
    if [ "$trace" = wagap-2013 ]; then
        folder=wagap-2013
        more="--clusters site-configs/clusters/cerit-wagap-clusters.yaml"
    fi
    tmp="$(mktemp -d)"
    # shellcheck disable=SC2086
    queuesim compare $setups --workload "../shared/workloads/metacentrum/$trace.swf.gz" $more \
        --reject-unrunnable --bin week --out "$tmp/bundle" --quiet
    # the committed folders keep the bundle without its three run folders (75 MB) and
    # keep their hand-written FINDINGS.md
    for f in "$tmp/bundle"/*; do
        [ -d "$f" ] && [ "$(basename "$f")" != figures ] && continue
        rm -rf "reports/$folder/$(basename "$f")"
        cp -r "$f" "reports/$folder/"
    done
    rm -rf "$tmp"
done
queuesim study dfrs --traces-per-load 2 --jobs 500 --hpc2n-weeks 4 --out reports/dfrs
