#!/usr/bin/env bash
# Regenerate the committed example reports, from the repository root:
#   sh reports/regenerate.sh              # the KTH example (seconds; what the tests check)
#   sh reports/regenerate.sh all          # every folder below, one after the other
#   sh reports/regenerate.sh dfrs dpsa    # only the folders named
# Folders: kth metacentrum wagap dfrs dpsa dpsa-exact (all but kth need ../shared/workloads).
# Each command is the one reports/README.md documents for its folder; each runs one process
# at a time (--workers 1) and is timed on stderr. The sweep example has its own two commands
# (reports/README.md): its 24 cells take far longer than the rest together.
set -eu
cd "$(dirname "$0")/.."

timed() {
    name="$1"
    shift
    start=$(date +%s)
    "$@"
    echo "regenerate.sh: $name took $(($(date +%s) - start)) s" >&2
}

kth() {
    queuesim compare site-configs/kth-sp2.yaml --workload workloads/kth-sp2-sample.swf \
        --policy easy --policy fcfs --policy conservative --jobs-format csv \
        --out reports/kth-sp2-policies --quiet
}

# the three MetaCentrum setups of paper 004 on a trace; the committed folder holds the
# comparison without its three run folders (--no-run-folders: 75 MB of per-job files) and
# keeps its hand-written FINDINGS.md
metacentrum() {
    folder="$1"
    trace="$2"
    shift 2
    tmp="$(mktemp -d)"
    queuesim compare site-configs/metacentrum-historic.yaml \
        site-configs/metacentrum-conservative.yaml site-configs/metacentrum-complex.yaml \
        --workload "../shared/workloads/metacentrum/$trace.swf.gz" "$@" \
        --reject-unrunnable --bin week --workers 1 --no-run-folders --out "$tmp/bundle" --quiet
    for f in "reports/$folder"/*; do
        [ "$(basename "$f")" = FINDINGS.md ] || rm -rf "$f"
    done
    cp -r "$tmp/bundle"/* "reports/$folder/"
    rm -rf "$tmp"
}

one() {
    case "$1" in
    kth) timed kth kth ;;
    metacentrum) timed metacentrum metacentrum metacentrum-2009 METACENTRUM-2009-2 ;;
    wagap)
        timed wagap metacentrum wagap-2013 wagap-2013 \
            --clusters site-configs/clusters/cerit-wagap-clusters.yaml
        ;;
    dfrs)
        timed dfrs queuesim study dfrs --traces-per-load 2 --jobs 500 --hpc2n-weeks 4 \
            --workers 1 --out reports/dfrs --quiet
        ;;
    dpsa)
        timed dpsa queuesim study dpsa --bound-nodes 100000 --workers 1 --out reports/dpsa \
            --quiet
        ;;
    dpsa-exact)
        timed dpsa-exact queuesim study dpsa --bound-nodes 100000 --estimate exact \
            --workers 1 --out reports/dpsa/exact-estimates --quiet
        ;;
    *)
        echo "regenerate.sh: unknown folder $1 (kth metacentrum wagap dfrs dpsa dpsa-exact all)" >&2
        exit 2
        ;;
    esac
}

if [ $# -eq 0 ]; then
    set -- kth
elif [ "$1" = all ]; then
    set -- kth metacentrum wagap dfrs dpsa dpsa-exact
fi
for folder in "$@"; do
    one "$folder"
done
