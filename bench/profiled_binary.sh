#!/bin/sh
# The compiled agent under Bun's CPU profiler (BUN_OPTIONS reaches a compiled
# binary too), in place of dist/csi-node-provisioner. Build it unminified, with
# the same bundle as plain JavaScript for bench/cpu_profile.ts --bundle:
#
#   dir=/tmp/csi-node-provisioner-prof; mkdir -p $dir
#   node_modules/.bin/bun build --compile --bytecode --format=esm --splitting \
#     main.ts --outfile $dir/agent
#   node_modules/.bin/bun build --target=bun --format=esm --splitting main.ts --outdir $dir/js
#   mv $dir/js/main.js $dir/agent.js
#   CSI_NODE_PROVISIONER_BIN=bench/profiled_binary.sh \
#     deno task bench:burst -- --runs 1 --results /tmp/profiled.md
#   deno run -A bench/cpu_profile.ts --bundle $dir/agent.js $dir/CPU.*.cpuprofile
#
# Profiling the binary rather than the source (profiled_agent.sh) keeps what
# start-up costs as shipped: bytecode, not parsing. exec keeps the pid the
# harness measures; Bun writes the profile when the agent exits.
dir="${CPU_PROFILE_DIR:-/tmp/csi-node-provisioner-prof}"
BUN_OPTIONS="--cpu-prof --cpu-prof-dir=$dir --cpu-prof-interval=250" exec "$dir/agent" "$@"
