{{/* Rules of the NetworkPolicies (networkpolicy.yaml); each renders a list of NetworkPolicy rules. */}}

{{/* DNS, to any resolver (kube-dns, or a node-local cache on a link-local address). */}}
{{- define "konnectz.netpol.dns" -}}
- ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end }}

{{/* The port of the first server of a URL (nats://h:4222, postgresql+psycopg://u:p@h:5432/db). */}}
{{- define "konnectz.netpol.urlPort" -}}
{{- $host := (urlParse (first (splitList "," .url))).host }}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $host) }}
{{- default .default $port }}
{{- end }}

{{/* NATS: the in-chart servers (from any namespace: runners may live in konnects.namespace), or the
     port of the external one at any address. */}}
{{- define "konnectz.netpol.nats" -}}
{{- if .Values.nats.enabled }}
- to:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: {{ .Release.Namespace }}
      podSelector:
        matchLabels:
          {{- include "konnectz.selectorLabels" (dict "ctx" . "component" "nats") | nindent 10 }}
  ports:
    - port: 4222
      protocol: TCP
{{- else }}
- ports:
    - port: {{ include "konnectz.netpol.urlPort" (dict "url" .Values.nats.url "default" "4222") }}
      protocol: TCP
{{- end }}
{{- end }}

{{/* PostgreSQL: the in-chart server, or the port of the external database (5432 unless database.url
     names another) at any address. */}}
{{- define "konnectz.netpol.postgresql" -}}
{{- if .Values.postgresql.enabled }}
- to:
    - podSelector:
        matchLabels:
          {{- include "konnectz.selectorLabels" (dict "ctx" . "component" "postgresql") | nindent 10 }}
  ports:
    - port: 5432
      protocol: TCP
{{- else }}
- ports:
    - port: {{ ternary "5432" (include "konnectz.netpol.urlPort" (dict "url" .Values.database.url "default" "5432")) (or (not .Values.database.url) (not (empty .Values.database.existingSecret))) }}
      protocol: TCP
{{- end }}
{{- end }}

{{/* The Kubernetes API server: not a pod, so by port (the Service's 443 and the usual endpoint port
     6443), at networkPolicy.kubeApi.cidrs or any address. */}}
{{- define "konnectz.netpol.kubeApi" -}}
- ports:
    {{- range .Values.networkPolicy.kubeApi.ports }}
    - port: {{ . }}
      protocol: TCP
    {{- end }}
  {{- with .Values.networkPolicy.kubeApi.cidrs }}
  to:
    {{- range . }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
  {{- end }}
{{- end }}

{{/* The internet: every address but networkPolicy.privateNetworks (the cluster's pods and Services,
     the nodes, cloud metadata), any port. */}}
{{- define "konnectz.netpol.internet" -}}
{{- $v4 := list }}
{{- $v6 := list }}
{{- range .Values.networkPolicy.privateNetworks }}
{{- if contains ":" . }}{{ $v6 = append $v6 . }}{{ else }}{{ $v4 = append $v4 . }}{{ end }}
{{- end }}
- to:
    - ipBlock:
        cidr: 0.0.0.0/0
        {{- with $v4 }}
        except:
          {{- toYaml . | nindent 10 }}
        {{- end }}
    - ipBlock:
        cidr: ::/0
        {{- with $v6 }}
        except:
          {{- toYaml . | nindent 10 }}
        {{- end }}
{{- end }}

{{/* The private networks flows may call (KONNECTZ_ALLOW_PRIVATE_NETWORKS, "10.1.0.0/16, 10.2.3.4"):
     pass the variable's value; nothing when empty. A bare address is one host. */}}
{{- define "konnectz.netpol.allowedPrivate" -}}
{{- $cidrs := list }}
{{- range splitList "," . }}
{{- $item := trim . }}
{{- if $item }}
{{- if not (contains "/" $item) }}{{ $item = printf "%s/%s" $item (ternary "128" "32" (contains ":" $item)) }}{{ end }}
{{- $cidrs = append $cidrs $item }}
{{- end }}
{{- end }}
{{- with $cidrs }}
# KONNECTZ_ALLOW_PRIVATE_NETWORKS: the private networks flows may call.
- to:
    {{- range . }}
    - ipBlock:
        cidr: {{ . }}
    {{- end }}
{{- end }}
{{- end }}

{{/* The dedicated runners (the operator's pods, label app.kubernetes.io/name=konnectz-runner) of the
     konnects namespace, or of every namespace with operator.clusterWide. */}}
{{- define "konnectz.netpol.runnerPeer" -}}
- namespaceSelector:
    {{- if .Values.operator.clusterWide }}
    {}
    {{- else }}
    matchLabels:
      kubernetes.io/metadata.name: {{ include "konnectz.konnectsNamespace" . }}
    {{- end }}
  podSelector:
    matchLabels:
      app.kubernetes.io/name: konnectz-runner
{{- end }}

{{/* Ingress and egress of a runner (the pool's and the dedicated ones); pass (dict "ctx" $ "allowed"
     <KONNECTZ_ALLOW_PRIVATE_NETWORKS of the runners>). Never PostgreSQL. */}}
{{- define "konnectz.netpol.runnerRules" -}}
{{- $ctx := .ctx }}
ingress:
  # Webhooks and hosted forms (the Ingress controller, in-cluster callers).
  - ports:
      - port: 8081
        protocol: TCP
egress:
  {{- include "konnectz.netpol.dns" $ctx | trim | nindent 2 }}
  {{- include "konnectz.netpol.nats" $ctx | trim | nindent 2 }}
  # The api: its credential broker (KONNECTZ_CREDENTIALS_URL) and KONNECTZ_API_URL.
  - to:
      - namespaceSelector:
          matchLabels:
            kubernetes.io/metadata.name: {{ $ctx.Release.Namespace }}
        podSelector:
          matchLabels:
            {{- include "konnectz.selectorLabels" (dict "ctx" $ctx "component" "api") | nindent 12 }}
    ports:
      - port: {{ $ctx.Values.api.port }}
        protocol: TCP
  {{- include "konnectz.netpol.internet" $ctx | trim | nindent 2 }}
  {{- include "konnectz.netpol.allowedPrivate" .allowed | trim | nindent 2 }}
  {{- with $ctx.Values.networkPolicy.extraEgress.runners }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
