{{- define "cnp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cnp.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "cnp.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "cnp.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cnp.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cnp.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "cnp.labels" -}}
{{ include "cnp.selectorLabels" . }}
app.kubernetes.io/part-of: csi-node-provisioner
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "cnp.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cnp.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The host directory of the CSI socket the agent dials: the example driver's, or driver.socketDir. */}}
{{- define "cnp.socketHostDir" -}}
{{- if .Values.exampleDriver.enabled -}}
{{- printf "%s/plugins/csi-hostpath" .Values.exampleDriver.kubeletDir -}}
{{- else -}}
{{- .Values.driver.socketDir | trimSuffix "/" -}}
{{- end -}}
{{- end -}}

{{- define "cnp.socketName" -}}
{{- if .Values.exampleDriver.enabled }}csi.sock{{ else }}{{ .Values.driver.socketName }}{{ end -}}
{{- end -}}

{{/* repository@digest when a digest is set, else repository:tag (the appVersion by default). */}}
{{- define "cnp.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The agent's flags: the same as deploy/daemonset.yaml with the default values. */}}
{{- define "cnp.args" -}}
- --csi-address=/csi/{{ include "cnp.socketName" . }}
- --node-deployment
- --feature-gates=Topology=true
- --strict-topology={{ .Values.topology.strict }}
- --immediate-topology=false
{{- if .Values.capacity.enabled }}
- --enable-capacity
{{- $mode := .Values.capacity.ownerMode }}
{{- if eq $mode "daemonset" }}
- --capacity-ownerref-level=1
{{- else if eq $mode "pod" }}
- --capacity-ownerref-level=0
{{- else if eq $mode "node" }}
- --capacity-owner-node
{{- else if eq $mode "none" }}
- --capacity-ownerref-level=-1
{{- else }}
{{- fail (printf "capacity.ownerMode must be daemonset, pod, node or none, not %q" $mode) }}
{{- end }}
- --capacity-poll-interval={{ .Values.capacity.pollInterval }}
- --kube-api-capacity-qps={{ .Values.capacity.kubeApi.qps }}
- --kube-api-capacity-burst={{ .Values.capacity.kubeApi.burst }}
{{- end }}
- --worker-threads={{ .Values.workerThreads }}
- --timeout={{ .Values.timeout }}
- --kube-api-qps={{ .Values.kubeApi.qps }}
- --kube-api-burst={{ .Values.kubeApi.burst }}
{{- if .Values.metrics.enabled }}
- --http-endpoint=:{{ .Values.metrics.port }}
- --metrics-path={{ .Values.metrics.path }}
{{- end }}
- --v={{ .Values.logLevel }}
{{- if not .Values.snapshots.enabled }}
- --snapshot-orphan-sweep-interval=0
{{- end }}
{{- with .Values.extraArgs }}
{{ toYaml . }}
{{- end }}
{{- end -}}
