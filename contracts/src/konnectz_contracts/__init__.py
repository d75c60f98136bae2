"""Konnectz contracts: what the api, the runner and the operator agree on, with no I/O.

Pure models and helpers only (pydantic; no network clients, no NATS, no HTTP): the api compiles
into them, the runner executes them, the operator reconciles them. Moved here from the runner
(``git log --follow`` shows their history):

- :mod:`~konnectz_contracts.model`: ``Strict``, ``KeyValue``, ``StepBase`` (the runner keeps
  ``StepContext``/``Outcome``, which carry an HTTP client and the outbound guard);
- :mod:`~konnectz_contracts.steps`: each step kind's ``KIND``, ``Config``, shared constants and
  ``compile_node`` (``steps/<kind>.py``) and the :data:`~konnectz_contracts.steps.Step` union, found
  by discovery; the kind's ``run`` stays in ``konnectz_runner.engine.steps.<kind>``;
- :mod:`~konnectz_contracts.canvas` (from the api): the editor document (canvas_json) as typed
  models; :mod:`~konnectz_contracts.compiling`: what the kinds' compilers share;
- :mod:`~konnectz_contracts.triggers`: the trigger models (webhook, schedule, form, polling) and
  their pure helpers (next fire, cron lines, form checks and pages, polling de-duplication), and the
  :data:`~konnectz_contracts.triggers.Trigger` union;
- :mod:`~konnectz_contracts.spec`: ``FlowSpec``;
- :mod:`~konnectz_contracts.resource`: the Konnect custom resource (the CRD is generated from it);
- :mod:`~konnectz_contracts.nats_auth`: the NATS users of the components and their permissions
  (the chart's and the devstack's ``authorization {}`` block, the clients' connect options);
- :mod:`~konnectz_contracts.events`: subjects, stream and bucket names, ``RunRequest``,
  ``StepResult``, ``TaskEvent``, ``Continuation``, ``encode_run``, ``fit_event`` (creating the streams
  and publishing is the runner's ``konnectz_runner.bus.events``);
- :mod:`~konnectz_contracts.quota`, :mod:`~konnectz_contracts.budgets`, :mod:`~konnectz_contracts.capture`
  (from the runner): the quota reservation's subjects and wire models, the rate budgets' bucket and
  keys, the capture window and captured request, with their streams and buckets;
- :mod:`~konnectz_contracts.manifest`: the app manifest models;
- :mod:`~konnectz_contracts.refs`: ``{{node.path}}`` references;
- :mod:`~konnectz_contracts.limits`, :mod:`~konnectz_contracts.timezones`,
  :mod:`~konnectz_contracts.broker_token`, :mod:`~konnectz_contracts.errors`;
- :mod:`~konnectz_contracts.formats` (new): the date units and the locale, currency, time zone and
  pattern checks of step configs (babel and ``regex`` are loaded on first check only).
"""
