{{/* Chart name. */}}
{{- define "konnectz.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the prefix of every object of the release (short enough for "-postgresql" and friends). */}}
{{- define "konnectz.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels of every object; pass (dict "ctx" $ "component" "api"). */}}
{{- define "konnectz.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
{{ include "konnectz.selectorLabels" . }}
{{- end }}

{{/* Selector labels; pass (dict "ctx" $ "component" "api"). */}}
{{- define "konnectz.selectorLabels" -}}
app.kubernetes.io/name: {{ include "konnectz.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* An image reference; pass (dict "ctx" $ "image" .Values.api.image). */}}
{{- define "konnectz.image" -}}
{{- printf "%s:%s" .image.repository (default .ctx.Chart.AppVersion .image.tag | toString) }}
{{- end }}

{{/* True (non-empty) when secrets may be generated: env dev or test. */}}
{{- define "konnectz.isDev" -}}
{{- if has .Values.env (list "dev" "test") }}true{{ end }}
{{- end }}

{{- define "konnectz.konnectsNamespace" -}}
{{- default .Release.Namespace .Values.konnects.namespace }}
{{- end }}

{{- define "konnectz.secretName" -}}
{{- default (printf "%s-secrets" (include "konnectz.fullname" .)) .Values.secrets.existingSecret }}
{{- end }}

{{/* Servers keeping a copy of every stream and bucket (KONNECTZ_NATS_REPLICAS of the api, the pool and the
     operator, which hands it to the runners it renders): nats.replicas, with the in-chart NATS or an external one. */}}
{{- define "konnectz.natsReplicas" -}}
{{- $replicas := int .Values.nats.replicas }}
{{- if or (lt $replicas 1) (gt $replicas 5) }}
{{- fail "nats.replicas must be between 1 and 5 (the replicas of every stream and bucket)" }}
{{- end }}
{{- $replicas }}
{{- end }}

{{- define "konnectz.natsUrl" -}}
{{- if .Values.nats.enabled }}
{{- printf "%s://%s-nats.%s.svc:4222" (ternary "tls" "nats" .Values.nats.tls.enabled) (include "konnectz.fullname" .) .Release.Namespace }}
{{- else }}
{{- required "nats.url is required when nats.enabled is false" .Values.nats.url }}
{{- end }}
{{- end }}

{{- define "konnectz.publicUrl" -}}
{{- if .Values.publicUrl }}
{{- .Values.publicUrl | trimSuffix "/" }}
{{- else if and .Values.ingress.enabled .Values.ingress.host }}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host }}
{{- end }}
{{- end }}

{{- define "konnectz.webhookBaseUrl" -}}
{{- if .Values.webhooks.baseUrl }}
{{- .Values.webhooks.baseUrl | trimSuffix "/" }}
{{- else if .Values.webhooks.ingress.host }}
{{- printf "https://%s" .Values.webhooks.ingress.host }}
{{- end }}
{{- end }}

{{- define "konnectz.postgresqlSecretName" -}}
{{- default (printf "%s-postgresql" (include "konnectz.fullname" .)) .Values.postgresql.auth.existingSecret }}
{{- end }}

{{/* Environment variables that point a container at the database (KONNECTZ_DATABASE_URL). */}}
{{- define "konnectz.databaseEnv" -}}
{{- if .Values.postgresql.enabled }}
- name: KONNECTZ_DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "konnectz.postgresqlSecretName" . }}
      key: password
- name: KONNECTZ_DATABASE_URL
  value: {{ printf "postgresql+psycopg://%s:$(KONNECTZ_DB_PASSWORD)@%s-postgresql.%s.svc:5432/%s" .Values.postgresql.auth.username (include "konnectz.fullname" .) .Release.Namespace .Values.postgresql.auth.database | quote }}
{{- else if .Values.database.existingSecret }}
- name: KONNECTZ_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.existingSecret }}
      key: {{ .Values.database.existingSecretKey }}
{{- else }}
{{- $_ := required "database.url or database.existingSecret is required when postgresql.enabled is false" .Values.database.url }}
- name: KONNECTZ_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "konnectz.fullname" . }}-database
      key: url
{{- end }}
{{- end }}

{{/* Environment shared by the api container and its migration init container. */}}
{{- define "konnectz.apiEnv" -}}
- name: KONNECTZ_ENV
  value: {{ .Values.env | quote }}
{{ include "konnectz.databaseEnv" . | trim }}
- name: KONNECTZ_NATS_URL
  value: {{ include "konnectz.natsUrl" . | quote }}
- name: KONNECTZ_NATS_REPLICAS
  value: {{ include "konnectz.natsReplicas" . | quote }}
{{- include "konnectz.natsClientEnv" (dict "ctx" . "user" "api" "secret" (include "konnectz.natsSecretName" .)) }}
- name: KONNECTZ_CATALOGUE_DIR
  value: {{ .Values.catalogueDir | quote }}
- name: KONNECTZ_RUNNER_MODE
  value: {{ ternary .Values.runnerPool.defaultMode "dedicated" .Values.runnerPool.enabled | quote }}
- name: KONNECTZ_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "konnectz.secretName" . }}
      key: secretKey
- name: KONNECTZ_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "konnectz.secretName" . }}
      key: encryptionKey
{{ include "konnectz.credentialsKeyEnv" . }}
{{- if .Values.flowise.enabled }}
- name: KONNECTZ_AI_HOST_URL
  value: {{ required "flowise.publicUrl is required with flowise.enabled: the URL browsers reach Flowise at" .Values.flowise.publicUrl | quote }}
- name: KONNECTZ_AI_HOST_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "konnectz.secretName" . }}
      key: aiHostSecret
{{- end }}
{{- with include "konnectz.publicUrl" . }}
- name: KONNECTZ_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- with include "konnectz.webhookBaseUrl" . }}
- name: KONNECTZ_WEBHOOK_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.adminEmails }}
- name: KONNECTZ_ADMIN_EMAILS
  value: {{ join "," . | quote }}
{{- end }}
{{- with .Values.namespaceBindings }}
- name: KONNECTZ_NAMESPACE_BINDINGS
  value: {{ include "konnectz.namespaceBindings" $ | quote }}
{{- end }}
- name: KONNECTZ_DEPLOYER
  value: kubernetes
- name: KONNECTZ_KUBE_NAMESPACE
  value: {{ include "konnectz.konnectsNamespace" . | quote }}
{{- with .Values.api.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The key of the runners' credential-broker tokens (api and operator; runners get one token each). */}}
{{- define "konnectz.credentialsKeyEnv" -}}
- name: KONNECTZ_CREDENTIALS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "konnectz.secretName" . }}
      key: credentialsKey
      # An existingSecret made before this key existed: the api derives a key, runners get no token.
      optional: true
{{- end }}

{{/* Prefix of cluster-scoped objects (ClusterRoles and their bindings): the release and its
     namespace, so releases of the same name in two namespaces never share or clash over one. */}}
{{- define "konnectz.clusterPrefix" -}}
{{- $prefix := printf "%s-%s" (include "konnectz.fullname" .) .Release.Namespace }}
{{- if gt (len $prefix) 40 }}
{{- /* shortened, with a hash of the whole so two long namespaces still differ */ -}}
{{- $prefix = printf "%s-%s" ($prefix | trunc 31 | trimSuffix "-") ($prefix | sha256sum | trunc 8) }}
{{- end }}
{{- $prefix }}
{{- end }}

{{/* Name of the KopfPeering object the operator replicas elect their active one through. */}}
{{- define "konnectz.peeringName" -}}
{{- printf "%s-operator" (include "konnectz.fullname" .) }}
{{- end }}

{{/* NATS users (konnectz_contracts.nats_auth): the in-chart NATS always has them; an external NATS
     when nats.auth.existingSecret names its passwords. */}}
{{- define "konnectz.natsAuth" -}}
{{- if or .Values.nats.enabled .Values.nats.auth.existingSecret }}true{{ end }}
{{- end }}

{{/* The Secret with the passwords of the api, runner and operator users (keys <user>-password). */}}
{{- define "konnectz.natsSecretName" -}}
{{- default (printf "%s-nats-auth" (include "konnectz.fullname" .)) .Values.nats.auth.existingSecret }}
{{- end }}

{{/* The Secret the runners of the Konnects' namespace read the runner password from (runner-password):
     the chart's copy of that one key, or nats.auth.existingSecret (which must then exist there too). */}}
{{- define "konnectz.natsRunnerSecretName" -}}
{{- default (printf "%s-nats-runner" (include "konnectz.fullname" .)) .Values.nats.auth.existingSecret }}
{{- end }}

{{/* A NATS client's credentials: dict "ctx" $ "user" "api"|"runner"|"operator" "secret" <Secret name>. */}}
{{- define "konnectz.natsClientEnv" -}}
{{- $ctx := .ctx }}
{{- if include "konnectz.natsAuth" $ctx }}
- name: KONNECTZ_NATS_USER
  value: {{ .user | quote }}
- name: KONNECTZ_NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ printf "%s-password" .user }}
{{- end }}
{{- if $ctx.Values.nats.tls.enabled }}
- name: KONNECTZ_NATS_CA_FILE
  value: /etc/konnectz/nats-ca/ca.crt
{{- end }}
{{- end }}

{{/* The CA of a tls:// NATS, mounted in the clients (volumeMount and volume). */}}
{{- define "konnectz.natsCaMount" -}}
{{- if .Values.nats.tls.enabled }}
- name: nats-ca
  mountPath: /etc/konnectz/nats-ca
  readOnly: true
{{- end }}
{{- end }}

{{- define "konnectz.natsCaVolume" -}}
{{- if .Values.nats.tls.enabled }}
- name: nats-ca
  secret:
    secretName: {{ required "nats.tls.secretName is required with nats.tls.enabled" .Values.nats.tls.secretName }}
    items:
      - key: ca.crt
        path: ca.crt
{{- end }}
{{- end }}

{{/* namespaceBindings as KONNECTZ_NAMESPACE_BINDINGS: namespace=owner,namespace=owner (one per namespace). */}}
{{- define "konnectz.namespaceBindings" -}}
{{- $pairs := list }}
{{- $seen := dict }}
{{- range .Values.namespaceBindings }}
{{- if hasKey $seen .namespace }}
{{- fail (printf "namespaceBindings: namespace %s is bound twice" .namespace) }}
{{- end }}
{{- $_ := set $seen .namespace true }}
{{- $pairs = append $pairs (printf "%s=%s" .namespace .owner) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}
