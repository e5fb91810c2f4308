{{- define "s3cond.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "s3cond.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "s3cond.selectorLabels" -}}
app.kubernetes.io/name: {{ include "s3cond.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "s3cond.labels" -}}
{{ include "s3cond.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "s3cond.secretName" -}}
{{- default (include "s3cond.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/* The chart refuses what cannot work: several processes on the embedded lease store. */}}
{{- define "s3cond.validate" -}}
{{- $store := "embedded" -}}
{{- if and .Values.config .Values.config.lease .Values.config.lease.store -}}
{{- $store = .Values.config.lease.store -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (eq $store "embedded") (not .Values.existingSecret) -}}
{{- fail "replicaCount > 1 needs a shared lease store: set config.lease.store to dynamodb or etcd (the embedded store serialises only one process's writes)" -}}
{{- end -}}
{{- /* service.adminPort put the unauthenticated admin port in the client Service; a values file still setting it would silently lose its metrics port. */ -}}
{{- if hasKey .Values.service "adminPort" -}}
{{- fail "service.adminPort is gone: the client Service carries the S3 port only; the admin port is on the metrics Service (metricsService.port)" -}}
{{- end -}}
{{- if and .Values.serviceMonitor.enabled (not .Values.metricsService.enabled) -}}
{{- fail "serviceMonitor.enabled needs metricsService.enabled: the ServiceMonitor scrapes the metrics Service" -}}
{{- end -}}
{{- end -}}
