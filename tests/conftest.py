"""Settings for the whole suite.

Hypothesis: no per-example deadline and no "too slow" health check. A property is about what the code
does, not how fast a loaded CI machine runs one example; speed has its own benchmarks (`benchmarks/`).
"""

from hypothesis import HealthCheck, settings

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")
