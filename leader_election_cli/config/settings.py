"""The admin client's settings from its properties file (--command-config / --admin.config).

`load_client_settings` reads the file (`properties`), maps the keys this tool understands onto
`ClientSettings` (SASL through `jaas`, TLS through `tls`), which `cluster.admin` hands to
kafka-python, and returns warnings for the rest. Kafka's own messages are used
where Kafka has them. No secret value (passwords, the JAAS config, private keys) ever reaches a repr,
an error or a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from leader_election_cli.config.properties import (
    Properties,
    check_unicode,
    java_int,
    java_io_message,
    java_trim,
    read_properties,
    read_text,
)
from leader_election_cli.config.properties import named as _named
from leader_election_cli.errors import InputError
from leader_election_cli.errors import shown as _shown

if TYPE_CHECKING:
    import ssl

    from leader_election_cli.config.login import KerberosSettings, OAuthSettings

DEFAULT_REQUEST_TIMEOUT_MS = 15_000  # what kafka-leader-election.sh sets unless the file does
DEFAULT_API_TIMEOUT_MS = 30_000
DEFAULT_RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MAX_MS = 100, 1000  # Kafka's client defaults
MAX_CLIENT_ID_BYTES = 2**15 - 1  # a request header's client id is a Kafka STRING: an int16 length
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

# Keys read here. Their values are never echoed when secret.
_SSL_KEYS = frozenset({
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.certificates", "ssl.truststore.password",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.key", "ssl.keystore.certificate.chain",
    "ssl.keystore.password", "ssl.key.password", "ssl.endpoint.identification.algorithm",
})
_SASL_KEYS = frozenset({"sasl.mechanism", "sasl.jaas.config", "sasl.login.callback.handler.class",
                        "sasl.kerberos.service.name"})
_USED_KEYS = _SSL_KEYS | _SASL_KEYS | {
    "security.protocol", "request.timeout.ms", "default.api.timeout.ms", "client.id", "retry.backoff.ms",
    "retry.backoff.max.ms",
    "bootstrap.servers",  # replaced by --bootstrap-server, as in Kafka's tool
}
# Kafka admin-client keys that tune the Java client only: accepted silently.
_TUNING_KEYS = frozenset({
    "bootstrap.controllers", "client.dns.lookup", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "enable.metrics.push", "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "connections.max.idle.ms", "metadata.max.age.ms",
    "send.buffer.bytes", "receive.buffer.bytes", "metric.reporters", "metrics.num.samples",
    "metrics.sample.window.ms", "metrics.recording.level", "auto.include.jmx.reporter", "retries",
    "host.resolver.class", "metadata.recovery.strategy", "metadata.recovery.rebootstrap.trigger.ms",
    "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation",
    "ssl.provider", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin",
})
_TUNING_PREFIXES = ("sasl.login.refresh.", "sasl.login.retry.", "sasl.login.connect.", "sasl.login.read.",
                    "sasl.oauthbearer.")
# Known keys that would change how the connection is secured, which this tool cannot honour: a note.
_NOT_APPLIED_KEYS = frozenset({
    "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.engine.factory.class",
    "sasl.client.callback.handler.class", "sasl.login.class",
    "security.providers",
})
_KAFKA_LIKE_KEY = re.compile(r"[a-z0-9]+(?:\.[a-z0-9_-]+)+")

_JAAS_EXAMPLE = ('Write it as: sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
                 'username="alice" password="..."; (continue long lines with a trailing backslash).')


# -- client settings ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ClientSettings:
    """What the admin client needs, independent of kafka-python (cluster.py translates it)."""

    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_context: ssl.SSLContext | None = None
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    api_timeout_ms: int = DEFAULT_API_TIMEOUT_MS
    retry_backoff_ms: int = DEFAULT_RETRY_BACKOFF_MS  # the first wait before asking again; doubles up to the max
    retry_backoff_max_ms: int = DEFAULT_RETRY_BACKOFF_MAX_MS
    client_id: str | None = None
    warnings: tuple[str, ...] = ()
    secrets: tuple[str, ...] = field(default=(), repr=False)  # every secret value read: hidden in all logs
    oauth: OAuthSettings | None = None  # sasl.mechanism=OAUTHBEARER
    kerberos: KerberosSettings | None = None  # sasl.mechanism=GSSAPI

    @classmethod
    def default(cls) -> ClientSettings:
        """No config file: PLAINTEXT and the tool's timeouts."""
        return cls()

    def bounded_by(self, timeout_ms: int | None) -> ClientSettings:
        """Our --timeout bounds the whole operation, and so every request within it."""
        if timeout_ms is None:
            return self
        return replace(self, api_timeout_ms=timeout_ms, request_timeout_ms=min(self.request_timeout_ms, timeout_ms))


def load_client_settings(path: str | None, timeout_override_ms: int | None = None) -> ClientSettings:
    """The settings of a --command-config file (or the defaults without one), bounded by --timeout."""
    if path is None:
        return ClientSettings.default().bounded_by(timeout_override_ms)
    source = _shown(path)
    entries = read_properties(read_text(path, "the config file", "--command-config (or --admin.config)", source,
                                        kafka_io_line=java_io_message(path)), source)
    return settings_from_properties(Properties(entries), source,
                                    _key_warnings(entries, source)).bounded_by(timeout_override_ms)


def settings_from_properties(props: Mapping[str, str], source: str, warnings: tuple[str, ...] = ()) -> ClientSettings:
    """Map properties onto ClientSettings; Kafka's rules and messages where Kafka has them."""
    if "config.providers" in props:
        raise InputError(f"config.providers in {source} is not supported: ${{provider:...}} values would not be "
                         "resolved", hint="Write the values into the config file itself.")
    protocol = java_trim(props.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise InputError(f"Invalid value for configuration {_named(props, 'security.protocol')}: String must be one "
                         f"of: {', '.join(SECURITY_PROTOCOLS)}",
                         hint=f"Fix security.protocol in {source} (a line ending in '\\' continues on the next).")
    request_timeout = _int_setting(props, "request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS, source)
    api_timeout = _int_setting(props, "default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS, source)
    if api_timeout < request_timeout:
        raise InputError("The specified value of default.api.timeout.ms must be no smaller than the value of "
                         "request.timeout.ms.",
                         hint=f"Set default.api.timeout.ms to at least request.timeout.ms in {source} "
                              f"(the tool sets {DEFAULT_API_TIMEOUT_MS} unless the file does).")
    ignored = [key for key in sorted(props) if
               (key in _SASL_KEYS and not protocol.startswith("SASL_")) or
               (key in _SSL_KEYS and not protocol.endswith("SSL"))]
    if ignored:
        warnings += (f"{', '.join(ignored)} in {source} ignored: security.protocol is {protocol}",)
    mechanism, username, password, oauth, kerberos = (_sasl(props, protocol, source) if protocol.startswith("SASL_")
                                                      else (None,) * 5)
    client_id = java_trim(props["client.id"]) if "client.id" in props else None
    if client_id is not None and len(client_id.encode("utf-8", "surrogatepass")) > MAX_CLIENT_ID_BYTES:
        raise InputError(f"client.id in {source} is longer than {MAX_CLIENT_ID_BYTES} bytes (UTF-8), the most a "
                         "Kafka request header carries", hint=f"Shorten client.id in {source} (a line ending in "
                                                              "'\\' continues on the next line).")
    return ClientSettings(
        security_protocol=protocol, sasl_mechanism=mechanism, sasl_username=username, sasl_password=password,
        ssl_context=_tls_context(props, source) if protocol.endswith("SSL") else None,
        request_timeout_ms=request_timeout, api_timeout_ms=api_timeout,
        retry_backoff_ms=_int_setting(props, "retry.backoff.ms", DEFAULT_RETRY_BACKOFF_MS, source, "LONG"),
        retry_backoff_max_ms=_int_setting(props, "retry.backoff.max.ms", DEFAULT_RETRY_BACKOFF_MAX_MS, source, "LONG"),
        client_id=client_id or None, warnings=warnings, oauth=oauth, kerberos=kerberos,
        secrets=_secrets(props, password, username, client_id, oauth.client_secret if oauth else None,
                         oauth.client_id if oauth else None, kerberos.principal if kerberos else None,
                         *(oauth.secrets if oauth else ())))


_SECRET_KEYS = ("ssl.truststore.password", "ssl.keystore.password", "ssl.key.password", "ssl.keystore.key",
                "sasl.jaas.config", "sasl.oauthbearer.client.credentials.client.secret")


def _secrets(props: Mapping[str, str], *more: str | None) -> tuple[str, ...]:
    """The values of the file hidden in every log (the secrets, and who logs in and as which client), as
    written and as Kafka trims them."""
    values = {v for key in _SECRET_KEYS if key in props for v in (props[key], java_trim(props[key]))}
    values.update(v for v in more if v)
    return tuple(sorted(v for v in values if len(v) >= 4))


def _key_warnings(entries: list[tuple[int, str, str]], source: str) -> tuple[str, ...]:
    """A warning per key this tool does not use; never a value, and a key only when it looks like one."""
    warnings = []
    for number, key, _ in entries:
        if key in _USED_KEYS or key in _TUNING_KEYS or key.startswith(_TUNING_PREFIXES) or key == "config.providers":
            continue
        if key in _NOT_APPLIED_KEYS:
            warnings.append(f"{key} in {source} is not applied: this tool uses Python's own TLS and SASL settings")
        elif _KAFKA_LIKE_KEY.fullmatch(key) and not _may_hold_a_value(key):
            warnings.append(f"Unknown config key '{key}' in {source} ignored")
        else:
            warnings.append(f"Line {number} of {source} is not a known config key and is ignored")
    return tuple(warnings)


def _may_hold_a_value(key: str) -> bool:
    """A known key with more after it: most likely a line ending in `\\` joined to the next line, which may
    be the value (`ssl.key.password\\` then the password), or a key naming a secret: such a key is never shown."""
    known = (*_USED_KEYS, *_TUNING_KEYS, *_NOT_APPLIED_KEYS)
    return (any(word in key for word in ("password", "secret", "jaas", "token", "credential"))
            or any(key.startswith(name) and key != name for name in known))


def _int_setting(props: Mapping[str, str], key: str, default: int, source: str, kind: str = "INT") -> int:
    """A ConfigDef INT (or LONG) at least 0, with ConfigException's wording."""
    if key not in props:
        return default
    value = java_int(java_trim(props[key]), 32 if kind == "INT" else 64)
    if value is None:
        raise InputError(f"Invalid value for configuration {_named(props, key)}: Not a number of type {kind}"
                        , hint=f"Fix {key} in {source}: a number of milliseconds.")
    if value < 0:
        raise InputError(f"Invalid value for configuration {_named(props, key)}: Value must be at least 0",
                         hint=f"Fix {key} in {source}: a number of milliseconds.")
    return value


def _sasl(props: Mapping[str, str], protocol: str,
          source: str) -> tuple[str, str | None, str | None, OAuthSettings | None, KerberosSettings | None]:
    """(mechanism, username, password, OAUTHBEARER or GSSAPI settings) from sasl.mechanism and sasl.jaas.config."""
    from leader_election_cli.config.jaas import parse_jaas_config  # SASL only: a PLAINTEXT or SSL run skips them
    from leader_election_cli.config.login import LOGIN_MODULES, kerberos_settings, oauth_settings

    mechanism = java_trim(props.get("sasl.mechanism", "GSSAPI"))
    supported = ", ".join(LOGIN_MODULES)
    if mechanism not in LOGIN_MODULES:
        default = " (Kafka's default when sasl.mechanism is not set)" if "sasl.mechanism" not in props else ""
        hint = (f"Mechanism names are case-sensitive: write sasl.mechanism={mechanism.upper()}."
                if mechanism.upper() in LOGIN_MODULES else f"Set sasl.mechanism to one of {supported} in {source}.")
        raise InputError(f"The {_named(props, 'sasl.mechanism')}{default} is not supported: this tool supports "
                         f"{supported}", hint=hint)
    if "sasl.jaas.config" not in props:
        raise InputError(f"security.protocol {protocol} needs sasl.jaas.config in {source}", hint=_JAAS_EXAMPLE)
    try:
        modules = parse_jaas_config(java_trim(props["sasl.jaas.config"]))
    except ValueError as exc:
        raise InputError(f"Invalid sasl.jaas.config in {source}: {exc}", hint=_JAAS_EXAMPLE) from None
    if len(modules) != 1:
        raise InputError(f"Invalid sasl.jaas.config in {source}: JAAS config property contains {len(modules)} "
                         "login modules, should be 1 module", hint=_JAAS_EXAMPLE)
    module, expected = modules[0], LOGIN_MODULES[mechanism]
    if module.name != expected:
        named = module.name if module.name in set(LOGIN_MODULES.values()) else None
        what = f"names {named}" if named else "names a login module this tool does not support"
        raise InputError(f"sasl.jaas.config in {source} {what}; sasl.mechanism {mechanism} needs {expected}",
                         hint=f"Use {expected} in sasl.jaas.config, or the matching sasl.mechanism.")
    if module.options.get("tokenauth", "").lower() == "true":
        raise InputError(f"sasl.jaas.config in {source} asks for delegation-token authentication (tokenauth=true), "
                         "which this tool does not support", hint="Use a SCRAM user's own credentials.")
    for option in ("username", "password") if mechanism in _PASSWORD_MECHANISMS else ():
        if option not in module.options:
            raise InputError(f"sasl.jaas.config in {source} sets no {option}", hint=_JAAS_EXAMPLE)
        check_unicode(module.options[option], f"The {option} in sasl.jaas.config in {source}")
    if mechanism == "OAUTHBEARER":
        return mechanism, None, None, oauth_settings(props, module, source), None
    if mechanism == "GSSAPI":
        return mechanism, None, None, None, kerberos_settings(props, module, source)
    return mechanism, module.options["username"], module.options["password"], None, None


def _tls_context(props: Mapping[str, str], source: str) -> ssl.SSLContext:
    """`tls.ssl_context`, imported only when TLS is asked for (`ssl` is slow to import)."""
    from leader_election_cli.config.tls import ssl_context

    return ssl_context(props, source)
