{{/* The name of every object: the release's, unless it already says skill-sandbox. */}}
{{- define "skill-sandbox.fullname" -}}
{{- if contains "skill-sandbox" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-skill-sandbox" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "skill-sandbox.selector" -}}
app.kubernetes.io/name: skill-sandbox
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: serve
{{- end -}}

{{- define "skill-sandbox.labels" -}}
{{ include "skill-sandbox.selector" . }}
app.kubernetes.io/part-of: skill-sandbox
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
