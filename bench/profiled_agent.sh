#!/bin/sh
# The agent from source under Bun with its CPU profiler, in place of the
# compiled binary (whose minified names say nothing):
#
#   CSI_NODE_PROVISIONER_BIN=bench/profiled_agent.sh \
#     deno task bench:burst -- --runs 1 --results /tmp/profiled.md
#   deno run -A bench/cpu_profile.ts "${CPU_PROFILE_DIR:-/tmp/csi-node-provisioner-prof}"/*.cpuprofile
#
# exec keeps the pid the harness measures; Bun writes the profile when the
# agent exits (SIGTERM at the end of each run).
here=$(cd "$(dirname "$0")/.." && pwd)
exec "$here/node_modules/.bin/bun" --cpu-prof --cpu-prof-md \
  --cpu-prof-dir="${CPU_PROFILE_DIR:-/tmp/csi-node-provisioner-prof}" \
  --cpu-prof-interval=500 "$here/main.ts" "$@"
