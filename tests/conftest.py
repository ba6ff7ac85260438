"""Settings for the whole suite.

Hypothesis: no per-example deadline and no "too slow" health check. A property is about what the code
does, not how fast a loaded CI machine runs one example; speed has its own benchmarks (`benchmarks/`).
"""

from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default restore files go under $XDG_STATE_HOME: a directory of the test's, never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
