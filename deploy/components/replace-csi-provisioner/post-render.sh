#!/bin/sh
# A Helm post-renderer that runs this component over a chart's output, for a
# driver installed with its own chart that the operator does not edit:
#
#   helm install DRIVER CHART --namespace NS ... \
#     --post-renderer path/to/replace-csi-provisioner/post-render.sh
#
# It reads the rendered manifests on stdin and writes them, with the
# DaemonSet's csi-provisioner container swapped for this agent, on stdout.
# KUBECTL names the kubectl to run (default: kubectl from PATH);
# CSI_NODE_PROVISIONER_IMAGE, when set, is the agent's image repository
# (REGISTRY/csi-node-provisioner).
set -eu

component=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# kustomize refuses a component by absolute path: give it a copy beside the
# overlay.
cp -R "$component" "$work/component"
# The component reads spec.template.spec.serviceAccountName; a pod template
# with only the deprecated serviceAccount field (the API server copies it to
# serviceAccountName) gets it renamed, one YAML document at a time.
awk '
  function flush(   i, named) {
    named = 0
    for (i = 1; i <= n; i++) if (lines[i] ~ /^[ \t]+serviceAccountName:/) named = 1
    for (i = 1; i <= n; i++) {
      if (!named && lines[i] ~ /^[ \t]+serviceAccount:[ \t]/) {
        sub(/serviceAccount:/, "serviceAccountName:", lines[i])
      }
      print lines[i]
    }
    n = 0
  }
  /^---/ { flush(); print; next }
  { lines[++n] = $0 }
  END { flush() }
' > "$work/rendered.yaml"

{
  echo "resources:"
  echo "  - rendered.yaml"
  echo "components:"
  echo "  - component"
  if [ -n "${CSI_NODE_PROVISIONER_IMAGE:-}" ]; then
    echo "images:"
    echo "  - name: csi-node-provisioner"
    echo "    newName: $CSI_NODE_PROVISIONER_IMAGE"
  fi
} > "$work/kustomization.yaml"

"${KUBECTL:-kubectl}" kustomize "$work"
