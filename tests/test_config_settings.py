"""The --command-config file mapped onto ClientSettings: SASL, timeouts, warnings, and secrets kept secret."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leader_election_cli.config.jaas import LoginModule, parse_jaas_config
from leader_election_cli.config.properties import parse_properties
from leader_election_cli.config.settings import (
    ClientSettings,
    load_client_settings,
    settings_from_properties,
)
from leader_election_cli.errors import ExitCode, InputError

PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


def settings_of(tmp_path: Path, text: str, timeout_ms: int | None = None) -> ClientSettings:
    path = tmp_path / "client.properties"
    path.write_text(text, encoding="latin-1")
    return load_client_settings(str(path), timeout_ms)


def error_of(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as caught:
        settings_of(tmp_path, text)
    assert caught.value.hint
    return caught.value


# -- defaults and timeouts -------------------------------------------------------------------------------

def test_defaults_without_a_file() -> None:
    settings = load_client_settings(None, None)
    assert settings == ClientSettings.default()
    assert (settings.security_protocol, settings.request_timeout_ms, settings.api_timeout_ms) == ("PLAINTEXT", 15000,
                                                                                                   30000)
    assert settings.sasl_mechanism is None and settings.ssl_context is None and settings.client_id is None
    assert settings.warnings == ()


@pytest.mark.parametrize("file_text, override, request_ms, api_ms", [
    ("", None, 15000, 30000),
    ("", 5000, 5000, 5000),
    ("", 20000, 15000, 20000),
    ("request.timeout.ms=1000\n", None, 1000, 30000),
    ("request.timeout.ms=40000\ndefault.api.timeout.ms=60000\n", None, 40000, 60000),
    ("request.timeout.ms=40000\ndefault.api.timeout.ms=60000\n", 10000, 10000, 10000),
    ("default.api.timeout.ms = +45000 \n", None, 15000, 45000),
])
def test_timeouts(tmp_path: Path, file_text: str, override: int | None, request_ms: int, api_ms: int) -> None:
    settings = settings_of(tmp_path, file_text, override)
    assert (settings.request_timeout_ms, settings.api_timeout_ms) == (request_ms, api_ms)


def test_a_request_timeout_above_the_tools_api_timeout_is_kafkas_error(tmp_path: Path) -> None:
    error = error_of(tmp_path, "request.timeout.ms=60000")
    assert error.message == ("The specified value of default.api.timeout.ms must be no smaller than the value of "
                             "request.timeout.ms.")


@pytest.mark.parametrize("value, message", [
    ("abc", "Invalid value for configuration request.timeout.ms (line 1): Not a number of type INT"),
    ("1.5", "Invalid value for configuration request.timeout.ms (line 1): Not a number of type INT"),
    ("2147483648", "Invalid value for configuration request.timeout.ms (line 1): Not a number of type INT"),
    ("", "Invalid value for configuration request.timeout.ms (line 1): Not a number of type INT"),
    ("-1", "Invalid value for configuration request.timeout.ms (line 1): Value must be at least 0"),
])
def test_bad_timeout_values(tmp_path: Path, value: str, message: str) -> None:
    assert error_of(tmp_path, f"request.timeout.ms={value}").message == message


def test_the_retry_backoff_is_kafkas_and_the_files(tmp_path: Path) -> None:
    """How long to wait before asking for the controller again after a lost connection (LONG settings)."""
    default = settings_of(tmp_path, "")
    assert (default.retry_backoff_ms, default.retry_backoff_max_ms) == (100, 1000)
    tuned = settings_of(tmp_path, "retry.backoff.ms=250\nretry.backoff.max.ms=4000000000\n")
    assert (tuned.retry_backoff_ms, tuned.retry_backoff_max_ms, tuned.warnings) == (250, 4_000_000_000, ())
    assert error_of(tmp_path, "retry.backoff.ms=9223372036854775808").message == (
        "Invalid value for configuration retry.backoff.ms (line 1): Not a number of type LONG")
    assert error_of(tmp_path, "retry.backoff.max.ms=-5").message == (
        "Invalid value for configuration retry.backoff.max.ms (line 1): Value must be at least 0")


def test_client_id_is_trimmed_and_empty_means_none(tmp_path: Path) -> None:
    assert settings_of(tmp_path, "client.id=  ops-cron \n").client_id == "ops-cron"
    assert settings_of(tmp_path, "client.id=\n").client_id is None


@pytest.mark.parametrize("value, expected", [("plaintext", "PLAINTEXT"), (" Ssl ", "SSL"),
                                             ("sasl_plaintext", "SASL_PLAINTEXT")])
def test_security_protocol_in_any_case(tmp_path: Path, value: str, expected: str) -> None:
    extra = f"sasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required username=u password=p;\n"
    assert settings_of(tmp_path, f"security.protocol={value}\n{extra}").security_protocol == expected


def test_unknown_security_protocol(tmp_path: Path) -> None:
    assert error_of(tmp_path, "security.protocol=TLS").message == (
        "Invalid value for configuration security.protocol (line 1): String must be one of: PLAINTEXT, SSL, "
        "SASL_PLAINTEXT, SASL_SSL")


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load_client_settings(str(tmp_path / "nope.properties"))
    assert caught.value.message == (f"Unable to read the config file {tmp_path}/nope.properties: "
                                    "No such file or directory")


# -- SASL ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mechanism, module", [("PLAIN", PLAIN), ("SCRAM-SHA-256", SCRAM), ("SCRAM-SHA-512", SCRAM)])
def test_sasl_credentials(tmp_path: Path, mechanism: str, module: str) -> None:
    settings = settings_of(tmp_path, f"""security.protocol=SASL_PLAINTEXT
sasl.mechanism={mechanism}
sasl.jaas.config={module} required \\
    username="alice" \\
    password="p\\\\"a=ss;w";
""")
    assert (settings.sasl_mechanism, settings.sasl_username, settings.sasl_password) == (mechanism, "alice", 'p"a=ss;w')
    assert settings.ssl_context is None


OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5 = "com.sun.security.auth.module.Krb5LoginModule"


@pytest.mark.parametrize("text, message", [
    ("security.protocol=SASL_PLAINTEXT\n", "security.protocol SASL_PLAINTEXT needs sasl.jaas.config in {path}"),
    ("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n", "security.protocol SASL_SSL needs sasl.jaas.config "
                                                                "in {path}"),
    ("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config=" + OAUTH + " required;",
     "sasl.jaas.config in {path} sets no unsecuredLoginStringClaim_sub"),
    ("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config=" + OAUTH + " required;\n"
     "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
     "sasl.oauthbearer.token.endpoint.url is not set in {path}"),
    ("security.protocol=SASL_SSL\nsasl.jaas.config=" + KRB5 + " required useKeyTab=true;",
     "sasl.kerberos.service.name is not set in {path}"),
    ("security.protocol=SASL_SSL\nsasl.kerberos.service.name=kafka\nsasl.jaas.config=" + KRB5 + " required;",
     "sasl.jaas.config in {path}: Krb5LoginModule needs useKeyTab=true or useTicketCache=true"),
    ("security.protocol=SASL_SSL\nsasl.kerberos.service.name=kafka\nsasl.jaas.config=" + KRB5 +
     " required useKeyTab=true principal=c;", "sasl.jaas.config in {path}: useKeyTab=true needs keyTab"),
    ("security.protocol=SASL_SSL\nsasl.kerberos.service.name=kafka\nsasl.jaas.config=" + KRB5 +
     " required useKeyTab=true principal=c keyTab=\"/nonexistent/c.keytab\";",
     "The keyTab in sasl.jaas.config (line 3) in {path} cannot be read"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n", "security.protocol SASL_PLAINTEXT needs "
                                                                 "sasl.jaas.config in {path}"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
     f"sasl.jaas.config={SCRAM} required username=u password=p;",
     f"sasl.jaas.config in {{path}} names {SCRAM}; sasl.mechanism PLAIN needs {PLAIN}"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
     "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
     "sasl.jaas.config in {path} names org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule; "
     f"sasl.mechanism PLAIN needs {PLAIN}"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=com.example.Custom required;",
     f"sasl.jaas.config in {{path}} names a login module this tool does not support; sasl.mechanism PLAIN needs "
     f"{PLAIN}"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" + PLAIN + " required username=u;",
     "sasl.jaas.config in {path} sets no password"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" + PLAIN + " required password=p;",
     "sasl.jaas.config in {path} sets no username"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
     f"sasl.jaas.config={SCRAM} required username=u password=p tokenauth=true;",
     "sasl.jaas.config in {path} asks for delegation-token authentication (tokenauth=true), which this tool does "
     "not support"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" + PLAIN + " required username=u\n",
     "Invalid sasl.jaas.config in {path}: JAAS config entry not terminated by semi-colon"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" + PLAIN + " required username=\n",
     "Invalid sasl.jaas.config in {path}: Value not specified for an option in JAAS config"),
    ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=" + PLAIN + " required a=b;" + PLAIN
     + " required c=d;",
     "Invalid sasl.jaas.config in {path}: JAAS config property contains 2 login modules, should be 1 module"),
])
def test_sasl_errors(tmp_path: Path, text: str, message: str) -> None:
    assert error_of(tmp_path, text).message == message.format(path=tmp_path / "client.properties")


def test_mechanism_names_are_case_sensitive_but_the_hint_says_so(tmp_path: Path) -> None:
    error = error_of(tmp_path, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=plain\n")
    assert error.hint == "Mechanism names are case-sensitive: write sasl.mechanism=PLAIN."


# -- JAAS parsing ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, name, options", [
    (f'{PLAIN} required username="alice" password="secret";', PLAIN, {"username": "alice", "password": "secret"}),
    (f"{PLAIN} REQUIRED username='a b' password='x\"y';", PLAIN, {"username": "a b", "password": 'x"y'}),
    (f"{PLAIN} required username=alice password=s3cr$t!;", PLAIN, {"username": "alice", "password": "s3cr$t!"}),
    (f'{PLAIN} required\n  username="alice"\n  password="a\\\\b\\"c\\n\\101\\7\\08";', PLAIN,
     {"username": "alice", "password": 'a\\b"c\nA\x07\x008'}),
    (f'/* block */ {PLAIN} // to the end of the line\n required username="u"; ', PLAIN, {"username": "u"}),
    (f"{PLAIN} optional;", PLAIN, {}),
    (f"{PLAIN} required username=\"unterminated\n password=p;", PLAIN, {"username": "unterminated", "password": "p"}),
])
def test_jaas_parsing(text: str, name: str, options: dict[str, str]) -> None:
    [module] = parse_jaas_config(text)
    assert module.name == name and dict(module.options) == options


def test_a_lone_slash_starts_a_comment_that_swallows_the_next_character() -> None:
    """StreamTokenizer takes the character after '/' before skipping the rest of the line."""
    [module] = parse_jaas_config("m required a=x /\nb=y\n c=z;")
    assert dict(module.options) == {"a": "x", "c": "z"}


@pytest.mark.parametrize("text, message", [
    ("", "Login module not specified in JAAS config"),
    ("/* only a comment */", "Login module not specified in JAAS config"),
    (PLAIN, "Login module control flag not specified in JAAS config"),
    (f"{PLAIN} mandatory username=u;", "Invalid login module control flag in JAAS config: expected required, "
                                       "requisite, sufficient or optional"),
    (f"{PLAIN} required username=u", "JAAS config entry not terminated by semi-colon"),
    (f"{PLAIN} required username;", "Value not specified for an option in JAAS config"),
    (f"{PLAIN} required username=;", "Value not specified for an option in JAAS config"),
])
def test_jaas_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_jaas_config(text)
    assert str(caught.value) == message


def java_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


@given(st.text(max_size=30), st.text(max_size=30))
def test_jaas_quoted_values_round_trip(username: str, password: str) -> None:
    [module] = parse_jaas_config(f"{SCRAM} required username={java_quoted(username)} password={java_quoted(password)};")
    assert dict(module.options) == {"username": username, "password": password}


@given(st.text(max_size=60))
def test_any_jaas_text_parses_or_fails_with_value_error(text: str) -> None:
    try:
        modules = parse_jaas_config(text)
    except ValueError as error:
        assert "JAAS config" in str(error)
    else:
        assert modules and all(isinstance(m, LoginModule) for m in modules)


# -- warnings --------------------------------------------------------------------------------------------

def test_warnings_for_keys_this_tool_does_not_use(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, """bootstrap.servers=ignored:9092
retries=5
metadata.max.age.ms=1000
sasl.login.refresh.window.factor=0.8
ssl.cipher.suites=TLS_AES_128_GCM_SHA256
group.id=my-group
this line is not a setting
""")
    path = tmp_path / "client.properties"
    assert settings.warnings == (
        f"ssl.cipher.suites in {path} is not applied: this tool uses Python's own TLS and SASL settings",
        f"Unknown config key 'group.id' in {path} ignored",
        f"Line 7 of {path} is not a known config key and is ignored",
    )


def test_security_settings_for_another_protocol_are_reported_as_ignored(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, "sasl.mechanism=PLAIN\nssl.truststore.location=/x.pem\n")
    assert settings.warnings == (f"sasl.mechanism, ssl.truststore.location in {tmp_path / 'client.properties'} "
                                 "ignored: security.protocol is PLAINTEXT",)
    assert settings.sasl_mechanism is None and settings.ssl_context is None


def test_config_providers_are_refused(tmp_path: Path) -> None:
    error = error_of(tmp_path, "config.providers=file\nsasl.jaas.config=${file:/s.properties:jaas}")
    assert error.message.startswith("config.providers in ")


# -- secrets never leak ----------------------------------------------------------------------------------

SECRET = "Hunter2Secret"
SECRET_CONFIGS = [
    # SASL: good, and broken in every way that reaches a message
    f'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required username="u" '
    f'password="{SECRET}";',
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={SECRET}",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={SECRET} required;",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} {SECRET};",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required {SECRET};",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required password={SECRET}",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required password={SECRET};",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={SCRAM} required password={SECRET};",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=\\u12{SECRET}",
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.jaas.config={PLAIN} required password={SECRET};",
    f"sasl.jaas.config={PLAIN} required password={SECRET};\nssl.key.password={SECRET}",
    # a JAAS value broken over lines without backslashes: the secret lands in a line of its own
    f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required\n  {SECRET}\n"
    f'  password="{SECRET}";',
    # TLS secrets
    f"security.protocol=SSL\nssl.truststore.location=/nonexistent.pem\nssl.truststore.password={SECRET}",
    f"security.protocol=SSL\nssl.truststore.password={SECRET}",
    f"security.protocol=SSL\nssl.keystore.password={SECRET}",
    f"security.protocol=SSL\nssl.keystore.key={SECRET}\nssl.keystore.certificate.chain=x\nssl.key.password={SECRET}",
    f"security.protocol=SSL\nssl.keystore.key={SECRET}\nssl.keystore.password={SECRET}\n"
    "ssl.keystore.certificate.chain=x",
    f"security.protocol=SSL\nssl.keystore.type=JKS\nssl.keystore.key={SECRET}",
    f"security.protocol=SSL\nssl.keystore.key=-----BEGIN PRIVATE KEY-----{SECRET}-----END PRIVATE KEY-----\n"
    f"ssl.keystore.certificate.chain=-----BEGIN CERTIFICATE-----{SECRET}-----END CERTIFICATE-----\n"
    f"ssl.key.password={SECRET}",
    f"security.protocol=SSL\nssl.keystore.location=/nonexistent.pem\nssl.key.password={SECRET}\n"
    f"ssl.keystore.password={SECRET}",
]


@pytest.mark.parametrize("text", SECRET_CONFIGS)
def test_no_secret_in_any_message_warning_or_repr(tmp_path: Path, text: str) -> None:
    try:
        settings = settings_of(tmp_path, text)
    except InputError as error:
        shown = [error.message, error.hint or "", str(error), repr(error)]
    else:
        shown = [repr(settings), str(settings), *settings.warnings]
    for text_shown in shown:
        assert SECRET not in text_shown


def test_the_password_is_kept_for_the_client_but_not_shown(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, SECRET_CONFIGS[0])
    assert settings.sasl_password == SECRET
    assert SECRET not in repr(settings) and SECRET not in str(settings)
    [module] = parse_jaas_config(f'{PLAIN} required username="u" password="{SECRET}";')
    assert SECRET not in repr(module)


def test_properties_are_read_as_latin1_like_kafka(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_bytes("client.id=caf\u00e9".encode())  # UTF-8 bytes, read as ISO-8859-1 by Kafka too
    assert load_client_settings(str(path)).client_id == "caf\u00c3\u00a9"


def test_settings_from_properties_without_a_file() -> None:
    settings = settings_from_properties({"client.id": "x"}, "inline")
    assert settings.client_id == "x" and settings.security_protocol == "PLAINTEXT"


# -- values from the file in messages -----------------------------------------------------------------

STRAY_SECRET = "Sup3rSecretPw"
JAAS_LINE = f'sasl.jaas.config={PLAIN} required username="alice" password="{STRAY_SECRET}";\n'


@pytest.mark.parametrize("first", [
    "security.protocol=SASL_PLAINTEXT", "sasl.mechanism=PLAIN", "request.timeout.ms=100",
    "ssl.endpoint.identification.algorithm=https", "ssl.truststore.location=/etc/hosts\nssl.truststore.type=PEM",
    "ssl.truststore.location=/nope",
])
def test_a_stray_backslash_never_shows_the_next_lines_secret(tmp_path: Path, first: str) -> None:
    """A line ending in '\\' takes the next line into its value, as in Java: an error naming that value
    would print sasl.jaas.config's password."""
    protocol = ("" if first.startswith("security.protocol") else
                "security.protocol=SSL\n" if first.startswith("ssl.") else "security.protocol=SASL_SSL\n")
    error = error_of(tmp_path, f"{protocol}{first}\\\n{JAAS_LINE}")
    text = f"{error.message} {error.hint}"
    assert STRAY_SECRET not in text and STRAY_SECRET.upper() not in text, text
    assert "(line " in error.message, text


def test_even_a_plain_wrong_value_is_not_shown_but_its_key_and_line_are(tmp_path: Path) -> None:
    message = error_of(tmp_path, "client.id=x\nsecurity.protocol=SASL_PLAIN\n").message
    assert message.startswith("Invalid value for configuration security.protocol (line 2)")
    assert "SASL_PLAIN " not in message


@pytest.mark.parametrize("text, message", [
    (f'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={PLAIN} required '
     'username="alice" password="Sur\\uD800rogateSecret";\n',
     "The password in sasl.jaas.config in {source} is not valid text: it holds a lone surrogate"),
    ("security.protocol=SSL\nssl.key.password=KeyPa\\uD800ssw0rdZ\n",
     "ssl.key.password is not valid text: it holds a lone surrogate"),
    ("security.protocol=SSL\nssl.key.password=" + "k" * 1025 + "\n",
     "ssl.key.password is longer than 1024 bytes"),
])
def test_passwords_openssl_or_utf8_cannot_carry_are_input_errors(tmp_path: Path, text: str, message: str) -> None:
    error = error_of(tmp_path, text)
    assert error.message.startswith(message.format(source=tmp_path / "client.properties"))
    assert "rogateSecret" not in error.message and "ssw0rdZ" not in error.message and "kkkk" not in error.message


# -- numbers and booleans as Kafka's ConfigDef parses them -----------------------------------------------------

OAUTH_CC = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.login.callback.handler.class="
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n"
            "sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:1/token\n"
            f'sasl.jaas.config={OAUTH} required clientId="id" clientSecret="secret";\n')


@pytest.mark.parametrize("line, read", [
    ("request.timeout.ms=000000000000015000", lambda s: s.request_timeout_ms == 15000),  # leading zeros: any number
    ("retry.backoff.ms=" + "0" * 25 + "250", lambda s: s.retry_backoff_ms == 250),
    ("sasl.login.connect.timeout.ms=+5000", lambda s: s.oauth.connect_timeout_ms == 5000),  # Integer.parseInt's sign
    ("sasl.login.read.timeout.ms= \uff15\uff10\uff10\uff10 ", lambda s: s.oauth.read_timeout_ms == 5000),  # fullwidth
    ("sasl.login.read.timeout.ms=\u0665\u0660\u0660\u0660", lambda s: s.oauth.read_timeout_ms == 5000),  # Arabic-Indic
    ("sasl.login.refresh.window.factor=0.9d", lambda s: s.oauth.refresh_window_factor == 0.9),  # parseDouble's
    ("sasl.login.refresh.window.factor=0x1.cp-1", lambda s: s.oauth.refresh_window_factor == 0.875),  # suffix, hex
    ("sasl.oauthbearer.header.urlencode= TRUE ", lambda s: s.oauth.urlencode_header),
    ("sasl.oauthbearer.header.urlencode=fal\u017fe", lambda s: not s.oauth.urlencode_header),  # equalsIgnoreCase
])
def test_numbers_and_booleans_kafka_accepts(line: str, read: Callable[[ClientSettings], bool]) -> None:
    """What Kafka's ConfigDef accepts (String.trim, Integer.parseInt / Long.parseLong, equalsIgnoreCase); the
    leading zeros and the sasl.login.*.timeout.ms signs and digits were refused before."""
    assert read(settings_from_properties(parse_properties(OAUTH_CC + line + "\n"), "f"))


@pytest.mark.parametrize("line, message", [
    # U+1D7CF, U+1D7D3 (mathematical bold 1 and 5) as a latin-1 file carries them: \\u escapes of the surrogates
    ("request.timeout.ms=\\ud835\\udfcf\\ud835\\udfd3", "request.timeout.ms: Not a number of type INT"),
    ("retry.backoff.ms=\\ud835\\udfcf", "retry.backoff.ms: Not a number of type LONG"),
    ("sasl.login.connect.timeout.ms=2147483648", "sasl.login.connect.timeout.ms: Not a number of type INT"),
    ("sasl.login.refresh.window.factor=\\u0660.\\u0669", "sasl.login.refresh.window.factor: Not a number of type "
                                                         "DOUBLE"),  # Arabic-Indic 0.9: float() took it
    ("sasl.login.refresh.window.factor=0.9_0", "sasl.login.refresh.window.factor: Not a number of type DOUBLE"),
    ("sasl.login.refresh.window.factor=0.9\\u00a0", "sasl.login.refresh.window.factor: Not a number of type DOUBLE"),
    ("sasl.login.refresh.window.factor=0.4", "sasl.login.refresh.window.factor: Value must be between 0.5 and 1.0"),
    ("sasl.oauthbearer.header.urlencode=yes", "sasl.oauthbearer.header.urlencode: Expected value to be either true "
                                              "or false"),
    ("sasl.oauthbearer.header.urlencode=", "sasl.oauthbearer.header.urlencode: Expected value to be either true or "
                                           "false"),
])
def test_numbers_and_booleans_kafka_refuses(tmp_path: Path, line: str, message: str) -> None:
    """Java reads a digit beyond U+FFFF as two surrogates, neither a digit (Python's int() took it)."""
    error = error_of(tmp_path, OAUTH_CC + line + "\n")
    assert error.message == f"Invalid value for configuration {message.replace(':', ' (line 6):', 1)}"
    value = line.split("=", 1)[1]
    assert error.exit_code == ExitCode.USAGE and (not value or value not in error.message + (error.hint or ""))


def unsecured_login(option: str) -> str:
    """A command config for OAUTHBEARER's unsecured login with one more JAAS `option`."""
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
            f'sasl.jaas.config={OAUTH} required unsecuredLoginStringClaim_sub="a" {option};\n')


@pytest.mark.parametrize(("lifetime", "seconds"), [("+60", 60), ("\\u0666\\u0660", 60), ("0" * 30 + "60", 60),
                                                 (" 60", None), ("0", None), ("9223372036854775808", None)])
def test_the_unsecured_token_lifetime_is_long_parse_long(tmp_path: Path, lifetime: str, seconds: int | None) -> None:
    """unsecuredLoginLifetimeSeconds, a JAAS option: Long.parseLong with no trim (a sign, Unicode digits and
    leading zeros were refused before); here also at least 1."""
    text = unsecured_login(f'unsecuredLoginLifetimeSeconds="{lifetime}"')
    if seconds is None:
        assert "unsecuredLoginLifetimeSeconds is not a positive number" in error_of(tmp_path, text).message
    else:
        oauth = settings_of(tmp_path, text).oauth
        assert oauth is not None and oauth.unsecured_lifetime_s == seconds


@pytest.mark.parametrize(("number", "claim"), [("5", 5.0), (" +2.5d ", 2.5), ("0x10p0", 16.0), ("\\u0665", None),
                                               ("1_0", None), ("NaN", None)])
def test_unsecured_number_claims_are_double_value_of(tmp_path: Path, number: str, claim: float | None) -> None:
    """unsecuredLoginNumberClaim_<name>: Double.valueOf (trimmed; ASCII digits, a d/f suffix, hexadecimal), and
    Kafka writes it as a double; Python's int()/float() took '\\u0665' and '1_0' and refused '+2.5d' and hex."""
    text = unsecured_login(f'unsecuredLoginNumberClaim_n="{number}"')
    if claim is None:
        assert "unsecuredLoginNumberClaim_n is not a number" in error_of(tmp_path, text).message
    else:
        oauth = settings_of(tmp_path, text).oauth
        assert oauth is not None and oauth.unsecured_claims["n"] == claim
        assert isinstance(oauth.unsecured_claims["n"], float)


@pytest.mark.parametrize(("credentials", "message"), [
    ('clientId="id" clientSecret=" \\t ";', "The clientSecret in sasl.jaas.config in {path} is blank"),
    ('clientId="id" clientSecret="";', "The clientSecret in sasl.jaas.config in {path} is blank"),
    ('clientId="id";', "{path} sets neither sasl.oauthbearer.client.credentials.client.secret nor clientSecret in "
                       "sasl.jaas.config"),
])
def test_a_blank_client_secret_is_refused_as_kafka_refuses_it(tmp_path: Path, credentials: str, message: str) -> None:
    """Kafka trims the JAAS clientId and clientSecret and refuses a blank one (JaasOptionsUtils.validateString,
    sanitizeString); a whitespace secret was sent as it was."""
    text = OAUTH_CC.replace('clientId="id" clientSecret="secret";', credentials)
    assert error_of(tmp_path, text).message == message.format(path=tmp_path / "client.properties")
