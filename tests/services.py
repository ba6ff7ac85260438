"""The services some tests need beyond Python: a JDK, a ZooKeeper server, an MIT Kerberos KDC, the gssapi
package (the [kerberos] extra). scripts/test installs them where it may (root, or sudo without a password).

Where one cannot be had, its tests skip with one reason line, "missing service NAME: why: how to get it",
raised here so that pytest folds each reason into one line, and conftest.py counts them in the run's
summary. Under CI=true such a skip is a failure instead: CI must run every test.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

PREFIX = "missing service"


def missing_service(service: str, reason: str) -> NoReturn:
    """Skip the test (or module, or fixture's tests) for a missing service; fail under CI=true."""
    message = f"{PREFIX} {service}: {reason}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message} (CI=true: CI runs every test, so every service must be there)", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_gssapi() -> None:
    """The gssapi package, for the tests that authenticate with Kerberos."""
    try:
        import gssapi  # noqa: F401
    except ImportError:
        missing_service("gssapi", "the gssapi package is not installed (the [kerberos] extra, built with "
                                  "libkrb5-dev's krb5-config and gcc: apt-get install libkrb5-dev gcc python3-dev)")


def require_command(command: str, package: str) -> None:
    """A program a test runs (java, groff, man), from the Debian package that has it."""
    if shutil.which(command) is None:
        missing_service(package, f"{command} is missing: apt-get install {package}")
