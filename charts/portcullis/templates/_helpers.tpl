{{/* Chart name, truncated to 63 characters (the DNS label limit). */}}
{{- define "portcullis.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: <release> unless the release name already contains the chart name. */}}
{{- define "portcullis.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "portcullis.selectorLabels" -}}
app.kubernetes.io/name: {{ include "portcullis.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{- define "portcullis.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "portcullis.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "portcullis.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "portcullis.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "portcullis.leaseName" -}}
{{- default (printf "%s-leader" (include "portcullis.fullname" .)) .Values.portcullisGateway.leaderElection.lockName -}}
{{- end -}}

{{- define "portcullis.controllerImage" -}}
{{- $img := .Values.portcullisGateway.image -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}

{{- define "portcullis.nginxImage" -}}
{{- $img := .Values.nginx.image -}}
{{- printf "%s:%s" $img.repository (default .Chart.AppVersion $img.tag) -}}
{{- end -}}

{{- define "portcullis.agentTLSSecret" -}}
{{- default (printf "%s-agent-tls" (include "portcullis.fullname" .)) .Values.portcullisGateway.agent.tls.secretName -}}
{{- end -}}
