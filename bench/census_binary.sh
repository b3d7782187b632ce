#!/bin/sh
# The compiled agent with bench/heap_census.js preloaded, in place of
# dist/csi-node-provisioner (CSI_NODE_PROVISIONER_AGENT, default dist/):
#
#   CENSUS_MODE=peak CENSUS_MIN_MIB=80 CENSUS_OUT=/tmp/peak.json \
#     CSI_NODE_PROVISIONER_BIN=bench/census_binary.sh \
#     deno task bench:burst -- --runs 1 --results /tmp/census.md
#
# exec keeps the pid the harness measures.
here=$(cd "$(dirname "$0")/.." && pwd)
BUN_OPTIONS="--preload $here/bench/heap_census.js" \
  exec "${CSI_NODE_PROVISIONER_AGENT:-$here/dist/csi-node-provisioner}" "$@"
