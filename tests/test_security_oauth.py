"""SASL/OAUTHBEARER against the sandbox: KIP-768 client credentials from a token endpoint this module
starts (RS256 JWTs, a JWKS document the brokers check signatures against), and Kafka's unsecured
development tokens. Failures end with their exit codes, and no secret or token is in any output."""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import security_fixtures
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.cluster.oauth import OAuthTokenProvider
from leader_election_cli.config.login import OAuthSettings
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.sasl_oauth import OAuthValidation

CLIENT_SECRET = "Cl1ent-S3cret-5a7e"
HANDLERS = ("org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler")
MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
TOOLS = ("drop-in", "elect")


@pytest.fixture(scope="module")
def idp_pki(tmp_path_factory: pytest.TempPathFactory) -> security_fixtures.Pki:
    """The token endpoint's own CA and certificate (for 127.0.0.1), nothing to do with any broker's."""
    return security_fixtures.make_pki(tmp_path_factory.mktemp("idp-pki"), client_name="unused")


@pytest.fixture(scope="module")
def idp(idp_pki: security_fixtures.Pki) -> Iterator[security_fixtures.TokenEndpoint]:
    endpoint = security_fixtures.TokenEndpoint({"leader-tool": CLIENT_SECRET},
                                               tls=(idp_pki.server_cert, idp_pki.server_key))
    yield endpoint
    endpoint.close()


@pytest.fixture(scope="module")
def sb(idp: security_fixtures.TokenEndpoint) -> Iterator[Sandbox]:
    with Sandbox(brokers=2, oauth=OAuthValidation(jwks_url=idp.jwks_url, required_scope="kafka")) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        yield sandbox


@pytest.fixture(scope="module")
def unsecured_sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=1, oauth=OAuthValidation()) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1]})
        yield sandbox


def client_credentials(url: str, *, handler: str = HANDLERS[1], secret: str = CLIENT_SECRET,
                       scope: str = "kafka") -> str:
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
            f"sasl.login.callback.handler.class={handler}\nsasl.oauthbearer.token.endpoint.url={url}\n"
            f'sasl.jaas.config={MODULE} required clientId="leader-tool" clientSecret="{secret}" scope="{scope}";\n'
            "default.api.timeout.ms=4000\nrequest.timeout.ms=3000\n")


def elect(sb: Sandbox, tool: str, config: str, tmp_path: Path, *extra: str) -> tuple[int, str, int]:
    path = tmp_path / "client.properties"
    path.write_text(config)
    if 2 in sb.brokers:
        sb.set_leader("t1", 0, 2)
    before = sb.request_count()
    if tool == "drop-in":
        result = CliRunner().invoke(drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type",
                                              "preferred", "--topic", "t1", "--partition", "0", "--command-config",
                                              str(path), *extra], catch_exceptions=False)
    else:
        result = CliRunner().invoke(toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "-p", "t1:0",
                                              "--command-config", str(path), *extra], catch_exceptions=False)
    output = result.stdout + result.stderr
    assert CLIENT_SECRET not in output and "Wr0ng-S3cret" not in output and "eyJ" not in output  # no JWT either
    assert "Traceback" not in output
    return result.exit_code, output, sb.request_count() - before


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("handler", HANDLERS)
def test_client_credentials_election(sb: Sandbox, idp: security_fixtures.TokenEndpoint, tmp_path: Path, tool: str,
                                     handler: str) -> None:
    code, output, _ = elect(sb, tool, client_credentials(idp.token_url, handler=handler), tmp_path)
    assert code == 0, output
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("tool", TOOLS)
def test_unsecured_development_tokens(unsecured_sb: Sandbox, tmp_path: Path, tool: str) -> None:
    config = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
              f'sasl.jaas.config={MODULE} required unsecuredLoginStringClaim_sub="alice";\n')
    code, output, _ = elect(unsecured_sb, tool, config, tmp_path)
    assert code == 0, output


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case, expected", [
    ("wrong secret", 4), ("scope the broker does not accept", 4), ("endpoint unreachable", 3),
    ("no endpoint", 2), ("unknown handler", 2), ("no clientSecret", 2),
])
def test_failures(sb: Sandbox, idp: security_fixtures.TokenEndpoint, tmp_path: Path, tool: str, case: str,
                  expected: int) -> None:
    config = client_credentials(idp.token_url)
    if case == "wrong secret":
        config = client_credentials(idp.token_url, secret="Wr0ng-S3cret")
    elif case == "scope the broker does not accept":
        config = client_credentials(idp.token_url, scope="other")
    elif case == "endpoint unreachable":
        config = client_credentials(idp.token_url.replace(idp.token_url.split(":")[2].split("/")[0], "1"))
    elif case == "no endpoint":
        config = "\n".join(line for line in config.splitlines() if "endpoint" not in line)
    elif case == "unknown handler":
        config = client_credentials(idp.token_url, handler="com.example.MyHandler")
    else:
        config = config.replace(f' clientSecret="{CLIENT_SECRET}"', "")
    code, output, requests = elect(sb, tool, config, tmp_path)
    assert code == expected, output
    if expected != 4 or case == "wrong secret":
        assert requests == 0  # refused before the brokers were asked anything
    assert sb.partition_state("t1", 0).leader == 2


@pytest.mark.parametrize("audience, issuer, expected", [
    (("kafka-brokers",), "test-idp", 0), (("other", "kafka-brokers"), None, 0),
    (("other",), None, 4), ((), "another-idp", 4),
])
def test_the_brokers_expected_audience_and_issuer(idp: security_fixtures.TokenEndpoint, tmp_path: Path,
                                                  audience: tuple[str, ...], issuer: str | None, expected: int) -> None:
    """The broker's sasl.oauthbearer.expected.audience (any one of them) and expected.issuer (the IdP's
    tokens name aud kafka-brokers and iss test-idp)."""
    validation = OAuthValidation(jwks_url=idp.jwks_url, expected_audience=audience, expected_issuer=issuer)
    with Sandbox(brokers=2, oauth=validation) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        code, output, _ = elect(sandbox, "elect", client_credentials(idp.token_url), tmp_path)
        assert code == expected, output
        assert sandbox.partition_state("t1", 0).leader == (1 if expected == 0 else 2)


def test_the_token_is_fetched_again_before_it_expires(idp: security_fixtures.TokenEndpoint) -> None:
    now = [1000.0]
    hidden: list[str] = []
    import time as real_time

    provider = OAuthTokenProvider(OAuthSettings(idp.token_url, "leader-tool", CLIENT_SECRET, "kafka"),
                                  on_secret=hidden.append, clock=lambda: now[0])
    first = provider.token()
    assert provider.token() == first and provider.fetches == 1  # reused while fresh
    issued = real_time.time()
    now[0] = issued + idp.lifetime_s * 0.79
    provider.token()
    assert provider.fetches == 1
    now[0] = issued + idp.lifetime_s * 0.81  # past sasl.login.refresh.window.factor (0.8) of its lifetime
    provider.token()
    assert provider.fetches == 2 and hidden[0] == first and len(hidden) == 2


def test_the_unsecured_token_is_kafkas_alg_none_jwt() -> None:
    import jwt

    provider = OAuthTokenProvider(OAuthSettings(None, unsecured_claims={"sub": "alice", "scope": ["a", "b"]},
                                                unsecured_lifetime_s=60), on_secret=lambda _: None,
                                  clock=lambda: 5000.0)
    token = provider.token()
    assert jwt.get_unverified_header(token) == {"alg": "none"} and token.endswith(".")
    assert jwt.decode(token, options={"verify_signature": False, "verify_exp": False}) == {
        "iat": 5000, "exp": 5060, "sub": "alice", "scope": ["a", "b"]}


# -- Kafka 4.1's keys, and the token endpoint's own CA (KIP-768) -------------------------------------------

KEYS_4_1 = {"id": "sasl.oauthbearer.client.credentials.client.id",
            "secret": "sasl.oauthbearer.client.credentials.client.secret", "scope": "sasl.oauthbearer.scope"}


def with_4_1_keys(url: str, jaas_options: str = "", *, secret: str = CLIENT_SECRET, scope: str = "kafka") -> str:
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
            f"sasl.login.callback.handler.class={HANDLERS[1]}\nsasl.oauthbearer.token.endpoint.url={url}\n"
            f"{KEYS_4_1['id']}=leader-tool\n{KEYS_4_1['secret']}={secret}\n{KEYS_4_1['scope']}={scope}\n"
            f"sasl.jaas.config={MODULE} required{jaas_options};\n"
            "default.api.timeout.ms=4000\nrequest.timeout.ms=3000\n")


@pytest.mark.parametrize("tool", TOOLS)
def test_kafka_4_1_client_credentials_keys(sb: Sandbox, idp: security_fixtures.TokenEndpoint, tmp_path: Path,
                                           tool: str) -> None:
    """sasl.oauthbearer.client.credentials.client.id/secret and sasl.oauthbearer.scope, with a bare JAAS entry
    (it was exit 2, 'sets no clientId')."""
    code, output, _ = elect(sb, tool, with_4_1_keys(idp.token_url), tmp_path)
    assert code == 0, output
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize(("jaas", "secret", "scope", "expected"), [
    (' clientId="someone-else" clientSecret="Wr0ng-S3cret" scope="other"', CLIENT_SECRET, "kafka", 0),
    (f' clientId="leader-tool" clientSecret="{CLIENT_SECRET}" scope="kafka"', "Wr0ng-S3cret", "kafka", 4),
    (f' clientId="leader-tool" clientSecret="{CLIENT_SECRET}" scope="kafka"', CLIENT_SECRET, "other", 4),
], ids=["keys-over-jaas", "wrong-secret-key-wins", "scope-key-wins"])
def test_the_4_1_keys_take_precedence_over_the_jaas_options(sb: Sandbox, idp: security_fixtures.TokenEndpoint,
                                                            tmp_path: Path, jaas: str, secret: str, scope: str,
                                                            expected: int) -> None:
    """ClientCredentialsJwtRetriever.configOrJaas: the config key when set, else the JAAS option."""
    code, output, _ = elect(sb, "elect", with_4_1_keys(idp.token_url, jaas, secret=secret, scope=scope), tmp_path)
    assert code == expected, output


def test_neither_key_nor_option_names_both(sb: Sandbox, idp: security_fixtures.TokenEndpoint, tmp_path: Path) -> None:
    config = "\n".join(line for line in with_4_1_keys(idp.token_url).splitlines() if KEYS_4_1["secret"] not in line)
    code, output, requests = elect(sb, "elect", config + "\n", tmp_path)
    assert (code, requests) == (2, 0), output
    assert f"sets neither {KEYS_4_1['secret']} nor clientSecret in sasl.jaas.config" in output


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("store", ["pem", "jks", "pkcs12"])
def test_an_https_token_endpoint_with_its_own_ca_in_the_jaas_options(
        sb: Sandbox, idp: security_fixtures.TokenEndpoint, idp_pki: security_fixtures.Pki, tmp_path: Path, tool: str,
        store: str) -> None:
    """KIP-768: the ssl.* options of the OAuthBearerLoginModule entry are the token endpoint's TLS
    (JaasOptionsUtils.createSSLSocketFactory); it was exit 3, certificate verify failed (system CAs only)."""
    options = {"pem": f' ssl.truststore.type="PEM" ssl.truststore.location="{idp_pki.ca_pem}"',
               "jks": f' ssl.truststore.location="{idp_pki.trust_jks}"'
                      f' ssl.truststore.password="{security_fixtures.STORE_PASSWORD}"',
               "pkcs12": f' ssl.truststore.type="PKCS12" ssl.truststore.location="{idp_pki.trust_p12}"'
                         f' ssl.truststore.password="{security_fixtures.STORE_PASSWORD}"'}[store]
    config = client_credentials(idp.https_token_url).replace('scope="kafka";', f'scope="kafka"{options};')
    code, output, _ = elect(sb, tool, config, tmp_path)
    assert code == 0, output
    assert security_fixtures.STORE_PASSWORD not in output
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize(("check", "expected"), [("", 0), ("HTTPS", 3)])
def test_the_token_endpoints_host_name_check_follows_the_jaas_option(
        sb: Sandbox, idp: security_fixtures.TokenEndpoint, idp_pki: security_fixtures.Pki, tmp_path: Path,
        check: str, expected: int) -> None:
    """127.1 is 127.0.0.1 to the socket but no name the certificate gives: an empty
    ssl.endpoint.identification.algorithm turns the check off as in Kafka (urllib3 checked it anyway)."""
    url = idp.https_token_url.replace("127.0.0.1", "127.1")
    options = f' ssl.truststore.type="PEM" ssl.truststore.location="{idp_pki.ca_pem}"' \
              f' ssl.endpoint.identification.algorithm="{check}"'
    config = client_credentials(url).replace('scope="kafka";', f'scope="kafka"{options};')
    code, output, _ = elect(sb, "elect", config, tmp_path)
    assert code == expected, output
    assert expected == 0 or "CERTIFICATE_VERIFY_FAILED" in output or "hostname" in output.lower(), output


@pytest.mark.parametrize(("options", "expected", "words"), [
    ("", 3, "TLS failed: CERTIFICATE_VERIFY_FAILED\nHint: Give the token endpoint's CA as ssl.truststore.*"),  # the
    # system's CAs: the endpoint's own CA is not among them
    (' ssl.truststore.type="PEM" ssl.truststore.location="{ca}" ssl.endpoint.identification.algorithm="ldaps"', 2,
     "The token endpoint's TLS options"),
    (' ssl.truststore.location="{jks}" ssl.truststore.password="Wr0ng-S3cret"', 2,
     "Keystore was tampered with, or password was incorrect"),
], ids=["system-cas", "bad-option", "wrong-store-password"])
def test_the_token_endpoints_tls_failures(sb: Sandbox, idp: security_fixtures.TokenEndpoint,
                                          idp_pki: security_fixtures.Pki, tmp_path: Path, options: str,
                                          expected: int, words: str) -> None:
    options = options.format(ca=idp_pki.ca_pem, jks=idp_pki.trust_jks)
    config = client_credentials(idp.https_token_url).replace('scope="kafka";', f'scope="kafka"{options};')
    code, output, requests = elect(sb, "elect", config, tmp_path)
    assert (code, requests) == (expected, 0), output
    assert words in output


# -- the token request byte for byte Kafka's (sasl.oauthbearer.header.urlencode, KIP-1025) -----------------

SPECIAL_SECRET = "a+b/c=d:e f~*"  # what generated secrets hold, and what URL encoding changes
RAW_HEADER = "Basic bGVhZGVyLXRvb2w6YStiL2M9ZDplIGZ+Kg=="  # Kafka 4.x's, from its own Java code
URLENCODED_HEADER = "Basic bGVhZGVyLXRvb2w6YSUyQmIlMkZjJTNEZCUzQWUrZiU3RSo="  # a%2Bb%2Fc%3Dd%3Ae+f%7E*


@pytest.mark.parametrize(("lines", "decode", "header"), [
    (f"{KEYS_4_1['secret']}={SPECIAL_SECRET}\n", None, RAW_HEADER),  # Kafka's default: as they are
    (f"{KEYS_4_1['secret']}={SPECIAL_SECRET}\nsasl.oauthbearer.header.urlencode=false\n", None, RAW_HEADER),
    (f'sasl.jaas.config={MODULE} required clientId=" leader-tool " clientSecret="  {SPECIAL_SECRET} ";\n', None,
     RAW_HEADER),  # trimmed as Kafka trims them
    (f"{KEYS_4_1['secret']}={SPECIAL_SECRET}\nsasl.oauthbearer.header.urlencode = TRUE\n", "form", URLENCODED_HEADER),
], ids=["default", "false", "jaas-trimmed", "true"])
def test_the_authorization_header_is_kafkas(tmp_path: Path, lines: str, decode: str | None, header: str) -> None:
    """An identity provider that reads the credentials as they are, or (RFC 6749) form-decoded, gets what Kafka's
    client sends it; before, both were percent-encoded in Python's way (%20 for a space, a '~' kept)."""
    import urllib.parse

    from leader_election_cli.config.settings import load_client_settings

    endpoint = security_fixtures.TokenEndpoint({"leader-tool": SPECIAL_SECRET}, decode={
        None: lambda text: text, "form": urllib.parse.unquote_plus}[decode])
    try:
        path = tmp_path / "client.properties"
        path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                        f"sasl.login.callback.handler.class={HANDLERS[1]}\n"
                        f"sasl.oauthbearer.token.endpoint.url={endpoint.token_url}\n{KEYS_4_1['id']}=leader-tool\n"
                        f"sasl.jaas.config={MODULE} required;\n{lines}")
        settings = load_client_settings(str(path)).oauth
        assert settings is not None
        OAuthTokenProvider(settings, on_secret=lambda _: None).token()  # the provider took it: no AuthError
        [(headers, body)] = endpoint.received
        assert (headers["Authorization"], body) == (header, "grant_type=client_credentials")
        assert (headers["Accept"], headers["Cache-Control"], headers["Content-Type"]) == (
            "application/json", "no-cache", "application/x-www-form-urlencoded")  # Kafka's too
    finally:
        endpoint.close()


@pytest.mark.parametrize(("scope", "body"), [
    ("  kafka~x y ", "grant_type=client_credentials&scope=kafka%7Ex+y"),  # trimmed, URLEncoder's '~' and '+'
    ("   ", "grant_type=client_credentials"),  # blank: no scope at all
    ("kafka", "grant_type=client_credentials&scope=kafka"),
])
def test_the_request_body_is_kafkas(scope: str, body: str) -> None:
    """Kafka's formatRequestBody, whatever sasl.oauthbearer.header.urlencode says."""
    endpoint = security_fixtures.TokenEndpoint({"leader-tool": CLIENT_SECRET})
    try:
        for urlencode in (False, True):
            OAuthTokenProvider(OAuthSettings(endpoint.token_url, "leader-tool", CLIENT_SECRET, scope,
                                             urlencode_header=urlencode), on_secret=lambda _: None).token()
        assert [received for _, received in endpoint.received] == [body, body]
    finally:
        endpoint.close()


@settings(max_examples=300)
@given(st.text())
def test_the_url_encoding_is_javas_urlencoder(text: str) -> None:
    """URLEncoder.encode(text, UTF_8) by its rules: a-z A-Z 0-9 . - * _ kept, a space '+', every other
    character the %XX (upper case) of each of its UTF-8 bytes."""
    from leader_election_cli.cluster.oauth import java_url_encode

    kept = set(string.ascii_letters + string.digits + ".-*_")
    expected = "".join(char if char in kept else "+" if char == " " else
                       "".join(f"%{byte:02X}" for byte in char.encode("utf-8")) for char in text)
    assert java_url_encode(text) == expected


@settings(max_examples=3, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=12), min_size=100, max_size=100))
def test_the_url_encoding_is_java_itself(java_parse: Callable[[str, list[str]], list[str]], values: list[str]) -> None:
    from leader_election_cli.cluster.oauth import java_url_encode

    assert [java_url_encode(value) for value in values] == java_parse("urlencode", values)
