{{/*
csi-node-provisioner.replaceCsiProvisioner: the fields that turn the upstream
csi-provisioner container of a CSI driver's own DaemonSet into this agent,
the same as deploy/components/replace-csi-provisioner does with kustomize.
A driver chart that has this chart as a dependency (alias
csiNodeProvisioner) writes, in its DaemonSet:

  - name: csi-provisioner
    {{- include "csi-node-provisioner.replaceCsiProvisioner" .Subcharts.csiNodeProvisioner | nindent 10 }}
    args: ...          # kept as they are
    securityContext:
      runAsUser: 0     # added: see deploy/components/replace-csi-provisioner/agent.yaml

and drops the container's own image, command, ports and probes. Rendered
with this chart's values: image, metrics.port, livenessProbe, readinessProbe.
The agent's intent journal goes beside the socket of --csi-address, i.e. in
the plugin's hostPath socket directory the container already mounts (see
deploy/components/replace-csi-provisioner/agent.yaml).
*/}}
{{- define "csi-node-provisioner.replaceCsiProvisioner" -}}
image: {{ include "cnp.image" . | quote }}
command:
  - /usr/local/bin/csi-node-provisioner
  - --http-endpoint=:{{ .Values.metrics.port }}
ports:
  - name: cnp-metrics
    containerPort: {{ .Values.metrics.port }}
    protocol: TCP
{{- with .Values.livenessProbe }}
livenessProbe:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.readinessProbe }}
readinessProbe:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
