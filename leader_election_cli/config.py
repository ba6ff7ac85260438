"""The admin client's properties file (--command-config / --admin.config), read as Kafka reads it.

`parse_properties` is java.util.Properties.load (Kafka's Utils.loadProps: ISO-8859-1, `\\uXXXX`
escapes); `load_client_settings` maps the keys this tool understands onto `ClientSettings`, which
cluster.py hands to kafka-python, and returns warnings for the rest. Kafka's own messages are used
where Kafka has them. No secret value (passwords, the JAAS config, private keys) ever reaches a repr,
an error or a warning.
"""

from __future__ import annotations

import os
import re
import ssl
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from leader_election_cli.errors import InputError
from leader_election_cli.errors import shown as _shown

DEFAULT_REQUEST_TIMEOUT_MS = 15_000  # what kafka-leader-election.sh sets unless the file does
DEFAULT_API_TIMEOUT_MS = 30_000
DEFAULT_RETRY_BACKOFF_MS, DEFAULT_RETRY_BACKOFF_MAX_MS = 100, 1000  # Kafka's client defaults
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
UNSUPPORTED_LOGIN_MODULES = {
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
    "org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerLoginModule",
    "com.sun.security.auth.module.Krb5LoginModule",
}
_MAX_FILE_BYTES = 16 * 2**20

# Keys read here. Their values are never echoed when secret.
_SSL_KEYS = frozenset({
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.certificates", "ssl.truststore.password",
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.key", "ssl.keystore.certificate.chain",
    "ssl.keystore.password", "ssl.key.password", "ssl.endpoint.identification.algorithm",
})
_SASL_KEYS = frozenset({"sasl.mechanism", "sasl.jaas.config"})
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
    "ssl.provider", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin",
})
_TUNING_PREFIXES = ("sasl.login.refresh.", "sasl.login.retry.", "sasl.login.connect.", "sasl.login.read.",
                    "sasl.oauthbearer.")
# Known keys that would change how the connection is secured, which this tool cannot honour: a note.
_NOT_APPLIED_KEYS = frozenset({
    "ssl.protocol", "ssl.enabled.protocols", "ssl.cipher.suites", "ssl.engine.factory.class",
    "sasl.client.callback.handler.class", "sasl.login.callback.handler.class", "sasl.login.class",
    "security.providers",
})
_KAFKA_LIKE_KEY = re.compile(r"[a-z0-9]+(?:\.[a-z0-9_-]+)+")

_KEYSTORE_CONVERSION = (
    "Convert the key store to PEM: keytool -importkeystore -srckeystore store.jks -destkeystore store.p12 "
    "-deststoretype PKCS12, then openssl pkcs12 -in store.p12 -out store.pem -nodes; "
    "set ssl.keystore.type=PEM and ssl.keystore.location=store.pem.")
_TRUSTSTORE_CONVERSION = (
    "Export the CA certificates to PEM: keytool -exportcert -rfc -alias CA_ALIAS -keystore truststore.jks "
    "-file ca.pem (for PKCS12: openssl pkcs12 -in truststore.p12 -nokeys -out ca.pem); "
    "set ssl.truststore.type=PEM and ssl.truststore.location=ca.pem.")
_JAAS_EXAMPLE = ('Write it as: sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required '
                 'username="alice" password="..."; (continue long lines with a trailing backslash).')


# -- java.util.Properties.load --------------------------------------------------------------------------

def parse_properties(text: str, source: str = "the properties") -> dict[str, str]:
    """Keys and values as java.util.Properties.load reads them (a repeated key: the last one wins)."""
    return {key: value for _, key, value in read_properties(text, source)}


def read_properties(text: str, source: str = "the properties") -> list[tuple[int, str, str]]:
    """Each entry as (line number, key, value), in file order."""
    return [(number, *_key_and_value(line, number, source)) for number, line in _logical_lines(text)]


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Java's LineReader: skip blank and comment lines, join continuations, drop their leading blanks."""
    natural = re.split(r"\r\n|\r|\n", text)
    pending: list[str] | None = None  # the parts of a logical line continued onto the next natural line
    start = 0
    for number, raw in enumerate(natural, 1):
        content = raw.lstrip(" \t\f")
        if pending is None:
            if not content or content[0] in "#!":
                continue
            start = number
            pending = []
        elif not content:
            # An empty continuation line ends the logical line; at the very end of the text Java keeps
            # even an empty one, elsewhere it drops it.
            if any(pending) or (number == len(natural) and raw == ""):
                yield start, "".join(pending)
            pending = None
            continue
        # Java counts the backslashes of this natural line only (it starts again after a continuation).
        backslashes = len(content) - len(content.rstrip("\\"))
        if backslashes % 2:
            pending.append(content[:-1])  # joined once, at the end: a long continued line stays linear
        else:
            yield start, "".join([*pending, content])
            pending = None
    if pending is not None:
        yield start, "".join(pending)


def _key_and_value(line: str, number: int, source: str) -> tuple[str, str]:
    """Properties.load0: the key ends at the first unescaped '=', ':' or blank."""
    key_end, value_start, has_separator, escaped = len(line), len(line), False, False
    for index, char in enumerate(line):
        if char in "=:" and not escaped:
            key_end, value_start, has_separator = index, index + 1, True
            break
        if char in " \t\f" and not escaped:
            key_end, value_start = index, index + 1
            break
        escaped = char == "\\" and not escaped
    while value_start < len(line) and line[value_start] in " \t\f=:":
        if line[value_start] in "=:":
            if has_separator:
                break
            has_separator = True
        value_start += 1
    return (_unescape(line[:key_end], number, source, "a key"),
            _unescape(line[value_start:], number, source, "a value"))


_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}


def _unescape(text: str, number: int, source: str, what: str) -> str:
    """Properties.loadConvert: \\t \\r \\n \\f, \\uXXXX, and a backslash before anything else drops."""
    def convert(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] != "u":
            return _ESCAPES.get(escape, escape)
        if re.fullmatch(r"u[0-9a-fA-F]{4}", escape):
            return chr(int(escape[1:], 16))
        raise InputError(f"Malformed \\uxxxx encoding in {what} on line {number} of {source}",
                         hint="Write \\u followed by exactly four hexadecimal digits, or \\\\u for a literal \\u.")

    converted = re.sub(r"\\(u.{0,4}|.)", convert, text, flags=re.S)
    # Java strings are UTF-16: an escaped surrogate pair is one character.
    return converted.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _java_trim(value: str) -> str:
    """String.trim(), which Kafka's ConfigDef applies to every value: drops characters up to U+0020."""
    return value.strip("".join(map(chr, range(33))))


# -- sasl.jaas.config -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class LoginModule:
    """One JAAS entry. Its options hold credentials, so they never appear in a repr."""

    name: str | None
    flag: str
    options: Mapping[str | None, str] = field(repr=False)


def parse_jaas_config(text: str) -> list[LoginModule]:
    """Kafka's JaasConfig parser (a java.io.StreamTokenizer), with messages that never echo a token."""
    tokens = _jaas_tokens(text)
    modules = []
    token = next(tokens, None)
    while token is not None:
        name = token[1]
        token = next(tokens, None)
        if token is None:
            raise ValueError("Login module control flag not specified in JAAS config")
        if token[1] is None or token[1].upper() not in ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL"):
            raise ValueError("Invalid login module control flag in JAAS config: "
                             "expected required, requisite, sufficient or optional")
        flag = token[1].upper()
        options: dict[str | None, str] = {}
        token = next(tokens, None)
        while token is not None and token != (";", None):
            key = token[1]
            equals, value = next(tokens, None), next(tokens, None)
            if equals != ("=", None) or value is None or value[1] is None:
                raise ValueError("Value not specified for an option in JAAS config")
            options[key] = value[1]  # Java keeps even a key that is not a word (null)
            token = next(tokens, None)
        if token is None:
            raise ValueError("JAAS config entry not terminated by semi-colon")
        modules.append(LoginModule(name, flag, options))
        token = next(tokens, None)
    if not modules:
        raise ValueError("Login module not specified in JAAS config")
    return modules


def _is_word_char(char: str) -> bool:
    code = ord(char)
    return (32 < code <= 128 and char not in "/;=\"'") or 160 <= code <= 255 or code > 255


_QUOTE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _jaas_tokens(text: str) -> Iterator[tuple[str, str | None]]:
    """(kind, value) tokens: ("word", w), ('"', s) or ("'", s) for quoted strings, (char, None) else."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if ord(char) <= 32:
            i += 1
        elif _is_word_char(char):
            start = i
            while i < n and _is_word_char(text[i]):
                i += 1
            yield "word", text[start:i]
        elif char in "\"'":
            value, i = _quoted(text, i + 1, char)
            yield char, value
        elif char == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    return
                i = end + 2
            else:  # '//' or a lone '/': the character after it is taken, then the rest of the line
                i = _end_of_line(text, i + 2)
        else:
            yield char, None
            i += 1


_LINE_END = re.compile(r"[\r\n]")
_OCTAL_ESCAPE = re.compile(r"[0-3][0-7]{0,2}|[4-7][0-7]?")  # \377 at most, as StreamTokenizer reads them


def _end_of_line(text: str, i: int) -> int:
    match = _LINE_END.search(text, i)
    return match.start() if match else len(text)


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """A StreamTokenizer quoted string from just after the quote: C escapes and octal, ends at the
    closing quote (consumed) or a line end (left for the caller)."""
    out, n = [], len(text)
    while i < n and text[i] != quote and text[i] not in "\r\n":
        if text[i] != "\\":
            out.append(text[i])
            i += 1
            continue
        if i + 1 >= n:  # a backslash at the very end: Java stores char -1
            out.append("\uffff")
            i += 1
            continue
        escape = text[i + 1]
        octal = _OCTAL_ESCAPE.match(text, i + 1)
        if octal:
            out.append(chr(int(octal.group(), 8)))
            i = octal.end()
        else:
            out.append(_QUOTE_ESCAPES.get(escape, escape))
            i += 2
    return "".join(out), i + 1 if i < n and text[i] == quote else i


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
    entries = read_properties(_read_text(path, "the config file", "--command-config (or --admin.config)", source),
                              source)
    return settings_from_properties({key: value for _, key, value in entries}, source,
                                    _key_warnings(entries, source)).bounded_by(timeout_override_ms)


def settings_from_properties(props: Mapping[str, str], source: str, warnings: tuple[str, ...] = ()) -> ClientSettings:
    """Map properties onto ClientSettings; Kafka's rules and messages where Kafka has them."""
    if "config.providers" in props:
        raise InputError(f"config.providers in {source} is not supported: ${{provider:...}} values would not be "
                         "resolved", hint="Write the values into the config file itself.")
    protocol = _java_trim(props.get("security.protocol", "PLAINTEXT")).upper()
    if protocol not in SECURITY_PROTOCOLS:
        raise InputError(f"Invalid value {_value(_java_trim(props['security.protocol']))} for configuration "
                         f"security.protocol: String must be one of: {', '.join(SECURITY_PROTOCOLS)}",
                         hint=f"Fix security.protocol in {source}.")
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
    mechanism, username, password = _sasl(props, protocol, source) if protocol.startswith("SASL_") else (None,) * 3
    client_id = _java_trim(props["client.id"]) if "client.id" in props else None
    return ClientSettings(
        security_protocol=protocol, sasl_mechanism=mechanism, sasl_username=username, sasl_password=password,
        ssl_context=ssl_context(props, source) if protocol.endswith("SSL") else None,
        request_timeout_ms=request_timeout, api_timeout_ms=api_timeout,
        retry_backoff_ms=_int_setting(props, "retry.backoff.ms", DEFAULT_RETRY_BACKOFF_MS, source, "LONG"),
        retry_backoff_max_ms=_int_setting(props, "retry.backoff.max.ms", DEFAULT_RETRY_BACKOFF_MAX_MS, source, "LONG"),
        client_id=client_id or None, warnings=warnings)


_MAX_KEY_PASSWORD_BYTES = 1024  # Python's ssl module passes at most this much to OpenSSL
_PLAIN_VALUE = re.compile(r"[^\s=\"';\\]{0,128}")
_PLAIN_PATH = re.compile(r"[^=\"';\\\r\n]{0,512}")


def _value(text: str, *, path: bool = False) -> str:
    """A value from the config file, for a message: shown only when it is one plain word (or a plain
    path), because a line ending in a stray backslash joins the next line into it, and that line may
    be sasl.jaas.config with its password."""
    if (_PLAIN_PATH if path else _PLAIN_VALUE).fullmatch(text):
        return _shown(text)
    return "(not shown: it holds blanks, quotes, '=', ';' or '\\', as when a line ending in '\\' runs into the next)"


def _read_text(path: str, what: str, option: str, shown_path: str) -> str:
    """A file's text as Kafka's Properties.load(InputStream) sees it: ISO-8859-1."""
    try:
        with open(path, "rb") as file:
            data = file.read(_MAX_FILE_BYTES + 1)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"Unable to read {what} {shown_path}: {reason}", hint=f"Check the {option} path.") from None
    if len(data) > _MAX_FILE_BYTES:
        raise InputError(f"Unable to read {what} {shown_path}: larger than {_MAX_FILE_BYTES // 2**20} MiB",
                         hint=f"Check the {option} path.")
    return data.decode("latin-1")


def _key_warnings(entries: list[tuple[int, str, str]], source: str) -> tuple[str, ...]:
    """A warning per key this tool does not use; never a value, and a key only when it looks like one."""
    warnings = []
    for number, key, _ in entries:
        if key in _USED_KEYS or key in _TUNING_KEYS or key.startswith(_TUNING_PREFIXES) or key == "config.providers":
            continue
        if key in _NOT_APPLIED_KEYS:
            warnings.append(f"{key} in {source} is not applied: this tool uses Python's own TLS and SASL settings")
        elif _KAFKA_LIKE_KEY.fullmatch(key):
            warnings.append(f"Unknown config key '{key}' in {source} ignored")
        else:
            warnings.append(f"Line {number} of {source} is not a known config key and is ignored")
    return tuple(warnings)


def _int_setting(props: Mapping[str, str], key: str, default: int, source: str, kind: str = "INT") -> int:
    """A ConfigDef INT (or LONG) at least 0, with ConfigException's wording."""
    if key not in props:
        return default
    text = _java_trim(props[key])
    bits = 32 if kind == "INT" else 64
    if not re.fullmatch(rf"[+-]?\d{{1,{bits * 3 // 10 + 1}}}", text) or not -2**(bits - 1) <= int(text) < 2**(bits - 1):
        raise InputError(f"Invalid value {_value(text)} for configuration {key}: Not a number of type {kind}",
                         hint=f"Fix {key} in {source}: a number of milliseconds.")
    if int(text) < 0:
        raise InputError(f"Invalid value {text} for configuration {key}: Value must be at least 0",
                         hint=f"Fix {key} in {source}: a number of milliseconds.")
    return int(text)


def _sasl(props: Mapping[str, str], protocol: str, source: str) -> tuple[str, str, str]:
    """(mechanism, username, password) from sasl.mechanism and sasl.jaas.config."""
    mechanism = _java_trim(props.get("sasl.mechanism", "GSSAPI"))
    supported = ", ".join(LOGIN_MODULES)
    if mechanism not in LOGIN_MODULES:
        default = " (Kafka's default when sasl.mechanism is not set)" if "sasl.mechanism" not in props else ""
        hint = (f"Mechanism names are case-sensitive: write sasl.mechanism={mechanism.upper()}."
                if mechanism.upper() in LOGIN_MODULES else f"Set sasl.mechanism to one of {supported} in {source}.")
        raise InputError(f"sasl.mechanism {_value(mechanism)}{default} is not supported: this tool supports "
                         f"{supported}", hint=hint)
    if "sasl.jaas.config" not in props:
        raise InputError(f"security.protocol {protocol} needs sasl.jaas.config in {source}", hint=_JAAS_EXAMPLE)
    try:
        modules = parse_jaas_config(_java_trim(props["sasl.jaas.config"]))
    except ValueError as exc:
        raise InputError(f"Invalid sasl.jaas.config in {source}: {exc}", hint=_JAAS_EXAMPLE) from None
    if len(modules) != 1:
        raise InputError(f"Invalid sasl.jaas.config in {source}: JAAS config property contains {len(modules)} "
                         "login modules, should be 1 module", hint=_JAAS_EXAMPLE)
    module, expected = modules[0], LOGIN_MODULES[mechanism]
    if module.name != expected:
        named = module.name if module.name in set(LOGIN_MODULES.values()) | UNSUPPORTED_LOGIN_MODULES else None
        what = f"names {named}" if named else "names a login module this tool does not support"
        raise InputError(f"sasl.jaas.config in {source} {what}; sasl.mechanism {mechanism} needs {expected}",
                         hint=f"Use {expected} in sasl.jaas.config, or the matching sasl.mechanism.")
    if module.options.get("tokenauth", "").lower() == "true":
        raise InputError(f"sasl.jaas.config in {source} asks for delegation-token authentication (tokenauth=true), "
                         "which this tool does not support", hint="Use a SCRAM user's own credentials.")
    for option in ("username", "password"):
        if option not in module.options:
            raise InputError(f"sasl.jaas.config in {source} sets no {option}", hint=_JAAS_EXAMPLE)
        _check_unicode(module.options[option], f"The {option} in sasl.jaas.config in {source}")
    return mechanism, module.options["username"], module.options["password"]


def _check_unicode(secret: str, what: str) -> None:
    """A value sent as UTF-8 must be text: a lone surrogate (a \\uD800 escape) cannot be (Java would send
    '?' in its place, and log in as someone else or not at all). The value is never shown."""
    try:
        secret.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} is not valid text: it holds a lone surrogate (a \\uD800-\\uDFFF escape)",
                         hint="Fix that \\u escape in the config file.") from None


# -- TLS ------------------------------------------------------------------------------------------------

_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)
_PRIVATE_KEY_LABELS = frozenset({"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY",
                                 "DSA PRIVATE KEY"})


def ssl_context(props: Mapping[str, str], source: str) -> ssl.SSLContext:
    """A verifying client context from PEM trust and key stores, as Kafka's DefaultSslEngineFactory."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # certificates and host names verified
    algorithm = _java_trim(props.get("ssl.endpoint.identification.algorithm", "https"))
    if algorithm == "":
        context.check_hostname = False  # Kafka: only the host-name check is off, the chain is still verified
    elif algorithm.lower() != "https":
        raise InputError(f"ssl.endpoint.identification.algorithm {_value(algorithm)} is not supported",
                         hint=f"Use https (the default), or an empty value to skip the host-name check, in {source}.")
    trusted = _trusted_certificates(props, source)
    if trusted is None:
        context.load_default_certs()
    else:
        _load_trusted(context, *trusted)
    _load_client_certificate(context, props, source)
    return context


def _store_type(props: Mapping[str, str], key: str) -> tuple[str, bool]:
    """(type, given explicitly); Kafka's default type is JKS."""
    return _java_trim(props.get(key, "JKS")).upper(), key in props


def _trusted_certificates(props: Mapping[str, str], source: str) -> tuple[str, str] | None:
    """(PEM text, where it came from) of the trust store, or None for the system's CAs."""
    store_type, explicit = _store_type(props, "ssl.truststore.type")
    certificates = props.get("ssl.truststore.certificates")
    location = props.get("ssl.truststore.location")
    has_password = "ssl.truststore.password" in props
    if certificates is not None:
        if explicit and store_type != "PEM":
            raise _ssl_error(f"SSL trust store certs can be specified only for PEM, but trust store type is "
                             f"{_value(store_type)}.", source)
        if location is not None:
            raise _ssl_error("Both SSL trust store location and separate trust certificates are specified.", source)
        if has_password:
            raise _ssl_error("SSL trust store password cannot be specified for PEM format.", source)
        return certificates, "ssl.truststore.certificates"
    if location is not None:
        location = _java_trim(location)
        text = _read_store(location, "ssl.truststore", store_type, explicit, _TRUSTSTORE_CONVERSION)
        if has_password:
            raise _ssl_error("SSL trust store password cannot be specified for PEM format.", source)
        return text, f"ssl.truststore.location {_value(location, path=True)}"
    if has_password:
        raise _ssl_error("SSL trust store is not specified, but trust store password is specified.", source)
    return None


def _load_trusted(context: ssl.SSLContext, text: str, where: str) -> None:
    certificates = _pem_blocks(text, {"CERTIFICATE"})
    if not certificates:
        raise InputError(f"{where} holds no certificate: At least one certificate expected, but none found",
                         hint="Give the CA certificates in PEM (-----BEGIN CERTIFICATE----- ...).")
    try:
        context.load_verify_locations(cadata="".join(certificates))
    except ssl.SSLError as exc:
        detail = f" ({exc.reason})" if exc.reason else ""
        raise InputError(f"{where} holds a certificate that cannot be read{detail}",
                         hint="Give the CA certificates in PEM (-----BEGIN CERTIFICATE----- ...).") from None


def _load_client_certificate(context: ssl.SSLContext, props: Mapping[str, str], source: str) -> None:
    """The key store, if any: Kafka's createKeystore rules, for PEM."""
    store_type, explicit = _store_type(props, "ssl.keystore.type")
    key, chain = props.get("ssl.keystore.key"), props.get("ssl.keystore.certificate.chain")
    location = props.get("ssl.keystore.location")
    has_password = "ssl.keystore.password" in props
    key_password = _java_trim(props["ssl.key.password"]) if "ssl.key.password" in props else None
    if key_password is not None:
        _check_unicode(key_password, "ssl.key.password")
        if len(key_password.encode("utf-8")) > _MAX_KEY_PASSWORD_BYTES:
            raise InputError(f"ssl.key.password is longer than {_MAX_KEY_PASSWORD_BYTES} bytes, more than OpenSSL "
                             "takes for a key's passphrase", hint="Protect the key with a shorter passphrase.")
    if key is not None:
        if explicit and store_type != "PEM":
            raise _ssl_error("SSL private key can be specified only for PEM, but key store type is "
                             f"{_value(store_type)}.", source)
        if chain is None:
            raise _ssl_error("SSL private key is specified, but certificate chain is not specified.", source)
        if location is not None:
            raise _ssl_error("Both SSL key store location and separate private key are specified.", source)
        if has_password:
            raise _ssl_error("SSL key store password cannot be specified with PEM format, only key password may be "
                             "specified.", source)
        _load_inline_key(context, key, chain, key_password)
    elif chain is not None:
        raise _ssl_error("SSL certificate chain is specified, but private key is not specified", source)
    elif location is not None:
        location = _java_trim(location)
        text = _read_store(location, "ssl.keystore", store_type, explicit, _KEYSTORE_CONVERSION)
        where = f"ssl.keystore.location {_value(location, path=True)}"
        _key_and_chain(text, where, text, where)
        if has_password:
            raise _ssl_error("SSL key store password cannot be specified with PEM format, only key password may be "
                             "specified", source)
        _load_key_and_chain(context, location, key_password, where)
    elif has_password:
        raise _ssl_error("SSL key store is not specified, but key store password is specified.", source)


def _ssl_error(kafka_message: str, source: str) -> InputError:
    return InputError(kafka_message, hint=f"Fix the ssl.* settings in {source}.")


def _read_store(location: str, prefix: str, store_type: str, explicit: bool, conversion: str) -> str:
    """A store file's text, refused with a conversion hint unless it is PEM."""
    text = _read_text(location, f"{prefix}.location", f"{prefix}.location", _value(location, path=True))
    if store_type not in ("PEM", "JKS", "PKCS12"):
        raise InputError(f"{prefix}.type {_value(store_type)} is not supported: this tool reads PEM stores only",
                         hint=conversion)
    if "-----BEGIN " not in text:
        kind = f"a {store_type} store" if explicit else "a JKS or PKCS12 store"
        raise InputError(f"{prefix}.location {_value(location, path=True)} is {kind}, not PEM: this tool reads PEM "
                         "stores only", hint=conversion)
    if explicit and store_type != "PEM":
        raise InputError(f"{prefix}.location {_value(location, path=True)} is a PEM file but {prefix}.type is "
                         f"{store_type}", hint=f"Set {prefix}.type=PEM.")
    return text


def _pem_blocks(text: str, labels: set[str] | frozenset[str]) -> list[str]:
    """The PEM blocks with these labels, re-wrapped: Kafka accepts PEM joined onto one line by continuation
    lines, OpenSSL does not. Blocks with headers (legacy encrypted keys) are kept as they are."""
    blocks = []
    for match in _PEM_BLOCK.finditer(text):
        label, body = match.groups()
        if label not in labels:
            continue
        if ":" in body:
            blocks.append(match.group(0).strip() + "\n")
            continue
        data = "".join(body.split())
        lines = "\n".join(data[i:i + 64] for i in range(0, len(data), 64))
        blocks.append(f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n")
    return blocks


def _load_inline_key(context: ssl.SSLContext, key: str, chain: str, key_password: str | None) -> None:
    """ssl.keystore.key + ssl.keystore.certificate.chain. The ssl module loads keys only from files, so the
    PEM goes to a private (0600) temporary file that is removed as soon as it is loaded."""
    pem = _key_and_chain(key, "ssl.keystore.key", chain, "ssl.keystore.certificate.chain")
    descriptor, name = tempfile.mkstemp(prefix="leader-election-key-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "w", encoding="ascii", errors="replace") as file:
            file.write(pem)
        _load_key_and_chain(context, name, key_password, "ssl.keystore.key")
    finally:
        os.unlink(name)


def _key_and_chain(key_text: str, key_where: str, chain_text: str, chain_where: str) -> str:
    """One private key and its certificate chain as clean PEM, or an InputError saying which is missing."""
    keys = _pem_blocks(key_text, _PRIVATE_KEY_LABELS)
    certificates = _pem_blocks(chain_text, {"CERTIFICATE"})
    if not keys:
        raise InputError(f"{key_where} holds no PEM private key", hint="Give the key in PEM "
                         "(-----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----).")
    if not certificates:
        raise InputError(f"{chain_where} holds no certificate: At least one certificate expected, but none found",
                         hint="Give the certificate chain in PEM, the key's own certificate first.")
    return "".join(certificates + keys[:1])


def _load_key_and_chain(context: ssl.SSLContext, certfile: str, key_password: str | None, where: str) -> None:
    try:
        context.load_cert_chain(certfile, password=key_password if key_password is not None else
                                _missing_key_password(where))
    except ssl.SSLError as exc:
        if exc.reason == "KEY_VALUES_MISMATCH":
            raise InputError(f"The private key in {where} does not match its certificate",
                             hint="Give the certificate issued for this key first in the chain.") from None
        detail = f" ({exc.reason})" if exc.reason else ""
        raise InputError(f"Could not load the private key in {where}{detail}",
                         hint="Check ssl.key.password (the key's passphrase) and that the key is PEM.") from None


def _missing_key_password(where: str) -> Callable[[], str]:
    """The password callback without ssl.key.password: OpenSSL would otherwise prompt on the terminal."""
    def no_password() -> str:
        raise InputError(f"The private key in {where} is encrypted, but ssl.key.password is not set",
                         hint="Set ssl.key.password to the key's passphrase.")
    return no_password
