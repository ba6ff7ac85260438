"""Whether nodes answer now: a connection to each one's listener and an ApiVersions request, in parallel.

The cluster's own view lags behind a crash: a broker killed with SIGKILL stays registered, unfenced and in
every ISR until broker.session.timeout.ms (9 s) has passed, while a connection to its listener is refused from
the first millisecond (reference/kafka-4.1.0-crash-window.txt). A probe asks the node itself. It goes through
the client's own transport settings (TLS where the config file asks for it, its trust store and key store);
ApiVersions is the one request a SASL listener answers before authentication (Kafka's
SaslServerAuthenticator), so no credential is sent, nor an OAuth token fetched, for a probe.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from leader_election_cli.cluster.socket_client import BrokerConnection, HandshakeFailed
from leader_election_cli.config.settings import ClientSettings

DEFAULT_PROBE_TIMEOUT_S = 1.0  # how long a node may take to answer before it counts as down
MAX_PROBES_AT_ONCE = 32


class Probe(NamedTuple):
    """One node's answer: `error` None when it answered ApiVersions within the time, else why not."""

    node: int
    address: tuple[str, int]
    seconds: float
    error: str | None

    @property
    def answered(self) -> bool:
        return self.error is None


def probe(addresses: Mapping[int, tuple[str, int]], settings: ClientSettings, timeout_s: float) -> dict[int, Probe]:
    """Each node of `addresses` (node id -> (host, port)) probed once, all at once, each within `timeout_s`."""
    if not addresses:
        return {}
    with ThreadPoolExecutor(max_workers=min(MAX_PROBES_AT_ONCE, len(addresses)),
                            thread_name_prefix="probe") as pool:
        futures = {node: pool.submit(_probe_one, node, address, settings, timeout_s)
                   for node, address in addresses.items()}
        return {node: future.result() for node, future in futures.items()}


def _probe_one(node: int, address: tuple[str, int], settings: ClientSettings, timeout_s: float) -> Probe:
    started = time.monotonic()
    try:
        BrokerConnection(address[0], address[1], settings.ssl_context, settings.client_id or "probe",
                         started + timeout_s).close()
        error = None
    except ConnectionRefusedError:
        error = "refused the connection"
    except HandshakeFailed as exc:
        error = f"failed the TLS handshake ({exc})"
    except TimeoutError:  # the socket's, or no answer in time
        error = f"did not answer within {timeout_s:g} s"
    except Exception as exc:  # whatever else: it did not answer
        error = f"did not answer ({type(exc).__name__}{f': {exc}' if str(exc) else ''})"
    return Probe(node, address, round(time.monotonic() - started, 4), error)
