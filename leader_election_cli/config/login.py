"""SASL logins: the JAAS login module each mechanism needs, and the logins other than a user name and
password, OAUTHBEARER and GSSAPI (Kerberos), read from the config file as Kafka's login modules read
them. Secrets stay out of every repr and message. Imported only for SASL."""

from __future__ import annotations

import math
import os
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field

from leader_election_cli.config.jaas import LoginModule
from leader_election_cli.config.properties import check_unicode, java_boolean, java_double, java_int, java_trim, named
from leader_election_cli.errors import InputError

OAUTH_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5_LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"
LOGIN_MODULES = {  # the JAAS login module each sasl.mechanism needs
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "OAUTHBEARER": OAUTH_LOGIN_MODULE,
    "GSSAPI": KRB5_LOGIN_MODULE,
}
OIDC_LOGIN_HANDLERS = (  # Kafka 3.x, and since 4.0
    "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
)

# Kafka 4.1's own keys for the client credentials (SaslConfigs), which take precedence over the JAAS options
# (ClientCredentialsJwtRetriever.configOrJaas): (config key, JAAS option, required)
CREDENTIAL_KEYS = (("sasl.oauthbearer.client.credentials.client.id", "clientId", True),
                   ("sasl.oauthbearer.client.credentials.client.secret", "clientSecret", True),
                   ("sasl.oauthbearer.scope", "scope", False))


@dataclass(frozen=True)
class OAuthSettings:
    """KIP-768 client credentials (token_endpoint set) or Kafka's unsecured development tokens."""

    token_endpoint: str | None
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    scope: str | None = None
    scope_claim: str = "scope"
    sub_claim: str = "sub"
    refresh_window_factor: float = 0.8  # sasl.login.refresh.window.factor
    connect_timeout_ms: int = 10_000  # sasl.login.connect.timeout.ms (Kafka: none, the JDK's own)
    read_timeout_ms: int = 10_000
    urlencode_header: bool = False  # sasl.oauthbearer.header.urlencode (KIP-1025): client id and secret URL-encoded
    unsecured_claims: Mapping[str, object] = field(default_factory=dict, repr=False)
    unsecured_lifetime_s: int = 3600
    extensions: Mapping[str, str] = field(default_factory=dict, repr=False)
    # an https token endpoint's TLS, from the ssl.* options of sasl.jaas.config (KIP-768), not the broker's
    ssl_context: ssl.SSLContext | None = field(default=None, repr=False, compare=False)
    secrets: tuple[str, ...] = field(default=(), repr=False)  # more values to hide: those ssl.* options' passwords


@dataclass(frozen=True)
class KerberosSettings:
    """A Krb5LoginModule entry: a keytab login, or the ticket cache `kinit` filled."""

    service_name: str
    principal: str | None
    keytab: str | None
    ticket_cache: str | None  # None: the default cache (KRB5CCNAME)


def oauth_settings(props: Mapping[str, str], module: LoginModule, source: str) -> OAuthSettings:
    """OAUTHBEARER's settings; the login callback handler decides secured or unsecured, as in Kafka."""
    options = module.options
    handler = java_trim(props.get("sasl.login.callback.handler.class", ""))
    factor = _float(props, "sasl.login.refresh.window.factor", 0.8, source, 0.5, 1.0)
    urlencode = _boolean(props, "sasl.oauthbearer.header.urlencode", False, source)
    timeouts = {name: _millis(props, f"sasl.login.{key}.timeout.ms", 10_000, source)
                for name, key in (("connect_timeout_ms", "connect"), ("read_timeout_ms", "read"))}
    extensions = {k.removeprefix("unsecuredLoginExtension_"): v for k, v in options.items()
                  if k and k.startswith("unsecuredLoginExtension_")}
    if handler:
        if handler not in OIDC_LOGIN_HANDLERS:
            raise InputError(f"The {named(props, 'sasl.login.callback.handler.class')} in {source} is not supported",
                             hint=f"Use {OIDC_LOGIN_HANDLERS[1]} (Kafka's OIDC client-credentials login) or leave "
                                  "it out for unsecured development tokens.")
        endpoint = java_trim(props.get("sasl.oauthbearer.token.endpoint.url", ""))
        if not endpoint:
            raise InputError(f"sasl.oauthbearer.token.endpoint.url is not set in {source}",
                             hint="Set it to your identity provider's token endpoint (https://...).")
        if not endpoint.startswith(("https://", "http://", "file:")):
            raise InputError(f"sasl.oauthbearer.token.endpoint.url in {source} is not an http(s) or file URL",
                             hint="Give the token endpoint's https:// URL.")
        credentials = {option: _config_or_jaas(props, options, key, option, required and
                                               not endpoint.startswith("file:"), source)
                       for key, option, required in CREDENTIAL_KEYS}
        context, secrets = _token_endpoint_tls(options, source) if endpoint.startswith("https://") else (None, ())
        return OAuthSettings(endpoint, credentials["clientId"], credentials["clientSecret"], credentials["scope"],
                             java_trim(props.get("sasl.oauthbearer.scope.claim.name", "scope")) or "scope",
                             java_trim(props.get("sasl.oauthbearer.sub.claim.name", "sub")) or "sub",
                             refresh_window_factor=factor, urlencode_header=urlencode, extensions=extensions,
                             ssl_context=context, secrets=secrets, **timeouts)
    return _unsecured(options, source, factor, extensions)


def _config_or_jaas(props: Mapping[str, str], options: Mapping[str | None, str], key: str, option: str,
                    required: bool, source: str) -> str | None:
    """`ClientCredentialsJwtRetriever.configOrJaas` (Kafka 4.1): the config key when the file sets it, else the
    JAAS option, trimmed either way (ConfigDef; JaasOptionsUtils.validateString, and the request formatter
    trims again); a required one set by neither, or blank, is an error."""
    if key in props:
        value, where = java_trim(props[key]), named(props, key)
    else:
        value, where = java_trim(options.get(option) or ""), f"the {option} in sasl.jaas.config"
    if required and not value:
        set_blank = key in props or option in options
        raise InputError(f"{where.replace('the ', 'The ', 1)} in {source} is blank" if set_blank else
                         f"{source} sets neither {key} nor {option} in sasl.jaas.config",
                         hint=f'Set {key} (Kafka 4.1), or write: {OAUTH_LOGIN_MODULE} required clientId="..." '
                              'clientSecret="..." scope="...";')
    if value:
        check_unicode(value, f"{where} in {source}")
    return value or None


def _token_endpoint_tls(options: Mapping[str | None, str], source: str) -> tuple[ssl.SSLContext, tuple[str, ...]]:
    """The https token endpoint's TLS as Kafka builds it (`JaasOptionsUtils.createSSLSocketFactory`, KIP-768):
    from the ssl.* options of the OAuthBearerLoginModule entry alone, with Kafka's defaults (the system's CAs,
    host names checked); the config file's own ssl.* settings are the brokers'."""
    from leader_election_cli.config.tls import ssl_context

    ssl_options = {key: value for key, value in options.items() if key and key.startswith("ssl.")}
    secrets = tuple(value for key, value in ssl_options.items() if key.endswith(("password", ".key")))
    try:
        return ssl_context(ssl_options, f"the sasl.jaas.config in {source}"), secrets
    except InputError as exc:
        raise InputError(f"The token endpoint's TLS options (sasl.jaas.config in {source}): {exc.message}",
                         hint=exc.hint) from None


def _unsecured(options: Mapping[str | None, str], source: str, factor: float,
               extensions: dict[str, str]) -> OAuthSettings:
    """OAuthBearerUnsecuredLoginCallbackHandler: unsecuredLoginStringClaim_<name>, unsecuredLoginListClaim_<name>,
    unsecuredLoginNumberClaim_<name>, unsecuredLoginLifetimeSeconds, unsecuredLoginPrincipalClaimName."""
    claims: dict[str, object] = {}
    for key, value in options.items():
        if not key:
            continue
        if key.startswith("unsecuredLoginStringClaim_"):
            claims[key.removeprefix("unsecuredLoginStringClaim_")] = value
        elif key.startswith("unsecuredLoginListClaim_"):
            separator, items = (value[0], value[1:]) if value else (",", "")
            claims[key.removeprefix("unsecuredLoginListClaim_")] = [i for i in items.split(separator) if i]
        elif key.startswith("unsecuredLoginNumberClaim_"):
            number = java_double(java_trim(value))  # Double.valueOf, which trims; Kafka writes the claim as a double
            if number is None or not math.isfinite(number):
                raise InputError(f"sasl.jaas.config in {source}: {key} is not a number", hint="Give a number.")
            claims[key.removeprefix("unsecuredLoginNumberClaim_")] = number
    principal_claim = options.get("unsecuredLoginPrincipalClaimName", "sub")
    if not isinstance(claims.get(principal_claim), str) or not claims[principal_claim]:
        raise InputError(f"sasl.jaas.config in {source} sets no unsecuredLoginStringClaim_{principal_claim}",
                         hint=f'Write: {OAUTH_LOGIN_MODULE} required unsecuredLoginStringClaim_sub="alice"; '
                              "(or set sasl.login.callback.handler.class for an identity provider's tokens).")
    lifetime = java_int(options.get("unsecuredLoginLifetimeSeconds", "3600"), 64)  # Long.parseLong, no trim
    if lifetime is None or lifetime < 1:
        raise InputError(f"sasl.jaas.config in {source}: unsecuredLoginLifetimeSeconds is not a positive number",
                         hint="Give a number of seconds.")
    return OAuthSettings(None, sub_claim=principal_claim, refresh_window_factor=factor, unsecured_claims=claims,
                         unsecured_lifetime_s=lifetime, extensions=extensions)


def kerberos_settings(props: Mapping[str, str], module: LoginModule, source: str) -> KerberosSettings:
    """Krb5LoginModule's options as Java reads them: useKeyTab/keyTab/principal or useTicketCache/ticketCache."""
    service = java_trim(props.get("sasl.kerberos.service.name", ""))
    if not service:
        raise InputError(f"sasl.kerberos.service.name is not set in {source}",
                         hint="Set it to the brokers' Kerberos service name (usually kafka), as Kafka requires.")
    options = {k: v for k, v in module.options.items() if k}
    use_keytab = options.get("useKeyTab", "false").lower() == "true"
    use_cache = options.get("useTicketCache", "false").lower() == "true"
    if use_keytab:
        keytab, principal = options.get("keyTab"), options.get("principal")
        if not keytab:
            raise InputError(f"sasl.jaas.config in {source}: useKeyTab=true needs keyTab",
                             hint=f'Write: {KRB5_LOGIN_MODULE} required useKeyTab=true keyTab="/path/client.keytab" '
                                  'principal="client@REALM";')
        if not principal:
            raise InputError(f"sasl.jaas.config in {source}: useKeyTab=true needs principal",
                             hint="Add principal=\"client@REALM\" to the Krb5LoginModule entry.")
        if "\0" in keytab or not os.access(keytab, os.R_OK):
            raise InputError(f"The keyTab in {named(props, 'sasl.jaas.config')} in {source} cannot be read",
                             hint="Check the keyTab path and its permissions.")
        return KerberosSettings(service, principal, keytab, None)
    if use_cache:
        return KerberosSettings(service, options.get("principal"), None, options.get("ticketCache"))
    raise InputError(f"sasl.jaas.config in {source}: Krb5LoginModule needs useKeyTab=true or useTicketCache=true",
                     hint="This tool cannot prompt for a Kerberos password: use a keytab or run kinit first.")


def _float(props: Mapping[str, str], key: str, default: float, source: str, low: float, high: float) -> float:
    if key not in props:
        return default
    value = java_double(java_trim(props[key]))
    if value is None:
        raise InputError(f"Invalid value for configuration {named(props, key)}: Not a number of type DOUBLE",
                         hint=f"Fix {key} in {source}: a number from {low} to {high}.")
    if not low <= value <= high:
        raise InputError(f"Invalid value for configuration {named(props, key)}: Value must be between {low} and "
                         f"{high}", hint=f"Fix {key} in {source}.")
    return value


def _millis(props: Mapping[str, str], key: str, default: int, source: str) -> int:
    """A ConfigDef INT (`java_int`); here also above 0 (0 would wait for ever, a negative one Java refuses)."""
    if key not in props:
        return default
    value = java_int(java_trim(props[key]))
    if value is None or value < 1:
        raise InputError(f"Invalid value for configuration {named(props, key)}: Not a number of type INT",
                         hint=f"Fix {key} in {source}: a number of milliseconds.")
    return value


def _boolean(props: Mapping[str, str], key: str, default: bool, source: str) -> bool:
    """A ConfigDef BOOLEAN (`java_boolean`), with ConfigException's wording (never the value)."""
    if key not in props:
        return default
    value = java_boolean(java_trim(props[key]))
    if value is None:
        raise InputError(f"Invalid value for configuration {named(props, key)}: Expected value to be either true "
                         "or false", hint=f"Fix {key} in {source}: true or false.")
    return value
