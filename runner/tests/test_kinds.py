"""One kind, one definition: the step kinds and their compilers are found by discovery.

Every contract kind (``konnectz_contracts/steps/<kind>.py``) has exactly one runner ``run``
(``konnectz_runner/engine/steps/<kind>.py``) and vice versa; every provider compiles to one kind.
"""

import typing

from konnectz_contracts import steps, triggers
from konnectz_contracts.spec import FlowSpec
from konnectz_runner.engine import steps as runner_steps


def _name(module):
    return module.__name__.rsplit(".", 1)[1]


def test_every_contract_kind_has_one_run_and_every_run_a_kind():
    contract_names = {_name(m) for m in steps.MODULES}
    runner_names = {_name(m) for m in runner_steps.MODULES}
    assert contract_names == runner_names
    assert set(runner_steps.KINDS) == set(steps.KINDS)
    for module in runner_steps.MODULES:
        kind = steps.KINDS[getattr(steps, _name(module)).KIND]
        assert runner_steps.KINDS[kind.KIND] is module.run
    assert len({m.KIND for m in steps.MODULES}) == len(steps.MODULES)


def test_every_kind_module_is_complete():
    for module in steps.MODULES:
        assert module.Config.model_fields["kind"].default == module.KIND
        assert isinstance(getattr(module, "ORDER", 1_000_000), int)
    # ORDER keeps the CRD's oneOf order of the first kinds; a new kind may leave it out (it comes
    # after them, by module name), but no two kinds share one.
    ordered = [m.ORDER for m in steps.MODULES if hasattr(m, "ORDER")]
    assert len(set(ordered)) == len(ordered)


def test_every_provider_maps_to_one_kind():
    owners = {}
    for module in steps.MODULES:
        for provider in getattr(module, "PROVIDERS", ()):
            assert provider not in owners, (provider, owners.get(provider), module.KIND)
            owners[provider] = module.KIND
            assert steps.COMPILERS[provider] is module.compile_node
    assert set(owners) == set(steps.COMPILERS)
    for provider, compile_trigger in triggers.COMPILERS.items():
        assert compile_trigger.__module__.startswith("konnectz_contracts.triggers."), provider
    assert set(triggers.COMPILERS) == {
        "webhook",
        "scheduler",
        "schedule",
        "form_input",
        "form",
        "flow_failed",
        "flow_call",
    }


def test_the_step_union_is_the_discovered_configs_in_order():
    annotation = FlowSpec.model_fields["steps"].annotation
    (step,) = typing.get_args(annotation)
    union, field = typing.get_args(step)[0], typing.get_args(step)[1]
    assert typing.get_args(union) == tuple(m.Config for m in steps.MODULES)
    assert field.discriminator == "kind"
