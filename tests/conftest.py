"""Test configuration: hypothesis profiles.

CI sets ``CI=true`` and gets a fixed example budget with no deadline, so the
suite takes the same work on every run; locally the default profile is
quicker. ``CI`` counts only when it says yes (``true``, ``1``, ``yes``,
``on``): ``CI=false``, ``CI=0`` or an empty ``CI`` select the local profile.
``HYPOTHESIS_PROFILE`` selects a profile explicitly; ``soak`` (what
``make soak`` runs) draws fresh random examples, ``SOAK_EXAMPLES`` per
property (6000, twenty times the CI budget, unless set).

A property that runs fewer examples than the profile's budget states its
share of CI's 300 (``max_examples=max(1, settings().max_examples * N // 300)``),
so that it runs N examples in CI and twenty times N in the soak; a plain cap
(``min(budget, N)``) would give the soak no more than CI.
"""

import os

from hypothesis import HealthCheck, settings

CI_EXAMPLES = 300

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "soak",
    max_examples=int(os.environ.get("SOAK_EXAMPLES") or 20 * CI_EXAMPLES),
    deadline=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)


def profile_name(environ) -> str:
    """The profile the environment asks for: ``HYPOTHESIS_PROFILE``, else
    ``ci`` when ``CI`` says yes, else ``dev``."""
    if environ.get("HYPOTHESIS_PROFILE"):
        return environ["HYPOTHESIS_PROFILE"]
    says_yes = (environ.get("CI") or "").strip().lower() in ("1", "true", "yes", "on")
    return "ci" if says_yes else "dev"


settings.load_profile(profile_name(os.environ))
