{{/* nats.conf of the in-chart NATS: one server, or a JetStream cluster with routes. */}}
{{- define "konnectz.natsConf" -}}
{{- $fullname := include "konnectz.fullname" . }}
{{- $replicas := int .Values.nats.replicas }}
server_name: $SERVER_NAME
listen: 0.0.0.0:4222
http: 0.0.0.0:8222
lame_duck_duration: 30s
lame_duck_grace_period: 10s
pid_file: /var/run/nats/nats.pid
{{- if lt (int .Values.nats.maxPayload) 8388608 }}
{{- fail "nats.maxPayload must be at least 8388608: the streams' max_msg_size (KZ_EVENTS 4 MiB) must fit" }}
{{- end }}
max_payload: {{ int .Values.nats.maxPayload }}
jetstream {
  store_dir: /data
  max_memory_store: {{ .Values.nats.jetstream.maxMemoryStore }}
  max_file_store: {{ .Values.nats.jetstream.maxFileStore }}
  {{- with .Values.nats.jetstream.syncInterval }}
  sync_interval: {{ . }}
  {{- end }}
}
{{- if .Values.nats.tls.enabled }}
# Clients connect with tls:// and verify the server against ca.crt (nats.tls.secretName).
tls {
  cert_file: /etc/nats-tls/tls.crt
  key_file: /etc/nats-tls/tls.key
  ca_file: /etc/nats-tls/ca.crt
}
{{- end }}
# Nothing connects anonymously: the api, runner and operator users (konnectz_contracts.nats_auth).
{{ .Files.Get "files/nats-authorization.conf" | trim }}
{{- if gt $replicas 1 }}
cluster {
  name: {{ $fullname }}
  listen: 0.0.0.0:6222
  routes: [
    {{- range $i := until $replicas }}
    nats://{{ $fullname }}-nats-{{ $i }}.{{ $fullname }}-nats-headless.{{ $.Release.Namespace }}.svc:6222
    {{- end }}
  ]
}
{{- end }}
{{- end }}
