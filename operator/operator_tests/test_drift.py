from __future__ import annotations

from konnectz_operator.drift import drifted, owner_konnect

RENDERED = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "kz-a", "labels": {"app": "kz-a"}},
    "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "runner", "image": "r:1"}]}}},
}


def live(**spec_changes) -> dict:
    spec = {
        "replicas": 1,
        "revisionHistoryLimit": 10,  # an API server default: not drift
        "template": {"spec": {"containers": [{"name": "runner", "image": "r:1", "imagePullPolicy": "IfNotPresent"}]}},
    }
    spec.update(spec_changes)
    return {"metadata": {"name": "kz-a", "labels": {"app": "kz-a", "extra": "x"}}, "spec": spec, "status": {"x": 1}}


def test_defaults_and_extra_labels_are_not_drift() -> None:
    assert not drifted(RENDERED, live())


def test_a_missing_child_or_a_changed_managed_field_is_drift() -> None:
    assert drifted(RENDERED, None)
    assert drifted(RENDERED, live(replicas=3))
    assert drifted(RENDERED, live(template={"spec": {"containers": [{"name": "runner", "image": "evil"}]}}))
    assert drifted(RENDERED, live(template={"spec": {"containers": []}}))
    changed = live()
    changed["metadata"]["labels"]["app"] = "other"
    assert drifted(RENDERED, changed)


def test_configmap_data_is_managed() -> None:
    rendered = {"metadata": {"name": "c"}, "data": {"flow.json": "{...}"}}
    assert not drifted(rendered, {"metadata": {"name": "c"}, "data": {"flow.json": "{...}"}})
    assert drifted(rendered, {"metadata": {"name": "c"}, "data": {"flow.json": "{}"}})


def test_owner_konnect_reads_the_owner_reference() -> None:
    child = {"metadata": {"ownerReferences": [{"apiVersion": "konnectz.io/v1alpha1", "kind": "Konnect", "name": "k"}]}}
    assert owner_konnect(child) == "k"
    assert owner_konnect({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p"}]}}) is None
    assert owner_konnect({"metadata": {}}) is None
