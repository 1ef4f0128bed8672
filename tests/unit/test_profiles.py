"""The hypothesis profile follows the environment: CI only when CI says yes."""

import pytest
from hypothesis import settings

from conftest import CI_EXAMPLES, profile_name


@pytest.mark.parametrize("value, profile", [
    ("true", "ci"), ("TRUE", "ci"), ("1", "ci"), ("yes", "ci"), ("on", "ci"),
    ("false", "dev"), ("0", "dev"), ("", "dev"), ("no", "dev"), (None, "dev"),
])
def test_ci_selects_the_ci_profile_only_when_it_says_yes(value, profile):
    environ = {} if value is None else {"CI": value}
    assert profile_name(environ) == profile


def test_an_explicit_profile_wins():
    assert profile_name({"CI": "true", "HYPOTHESIS_PROFILE": "soak"}) == "soak"


def test_ci_replays_a_fixed_budget_and_soak_is_random_and_twenty_times_larger():
    ci, soak = settings.get_profile("ci"), settings.get_profile("soak")
    assert ci.derandomize and ci.max_examples == CI_EXAMPLES
    assert not soak.derandomize and soak.max_examples >= 20 * CI_EXAMPLES
