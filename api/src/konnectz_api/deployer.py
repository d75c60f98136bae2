"""Moved to :mod:`konnectz_api.services.deployer`; this name stays only for the operator's tests.

TODO: drop it once operator/operator_tests import ``konnectz_api.services.deployer``.
"""

from konnectz_api.services.deployer import konnect_resource

__all__ = ["konnect_resource"]
