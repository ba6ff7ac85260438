"""Kerberos login for SASL/GSSAPI, as Kafka's Krb5LoginModule entry asks: a keytab or a ticket cache.

kafka-python's GSSAPI mechanism uses the process's default credentials, so the login points the MIT
library at them for this process only: a keytab login gets the principal's ticket from the KDC into a
private in-memory cache (KRB5CCNAME=MEMORY:..., the keytab as KRB5_CLIENT_KTNAME for renewals); a
ticket-cache login uses `ticketCache` or the default cache. Failures become exit codes: keytab
problems 2, KDC unreachable 3, credentials refused 4.
"""

from __future__ import annotations

import os
import uuid

from leader_election_cli.config.login import KerberosSettings
from leader_election_cli.errors import AuthError, InputError, LeaderElectionError, UnreachableError


def login(settings: KerberosSettings) -> None:
    """Credentials for `settings.principal` in this process's default cache, or a LeaderElectionError."""
    try:
        import gssapi
    except ImportError:
        raise InputError("sasl.mechanism=GSSAPI needs the gssapi package, which is not installed",
                         hint="Install MIT Kerberos' development files (Debian: libkrb5-dev), then "
                              "pip install gssapi (or the tool's [kerberos] extra).") from None
    if settings.keytab is not None:
        cache = f"MEMORY:leader-election-{uuid.uuid4().hex}"  # fresh: this login's ticket only
        os.environ["KRB5CCNAME"] = cache
        os.environ["KRB5_CLIENT_KTNAME"] = settings.keytab
        store = {"client_keytab": settings.keytab, "ccache": cache}
    else:
        os.environ.pop("KRB5_CLIENT_KTNAME", None)  # the cache kinit filled, nothing else
        if settings.ticket_cache:
            os.environ["KRB5CCNAME"] = settings.ticket_cache
        store = None
    try:
        name = (gssapi.Name(settings.principal, gssapi.NameType.kerberos_principal)
                if settings.principal else None)
        credentials = gssapi.Credentials(name=name, usage="initiate", store=store)
        credentials.inquire()  # a ticket-cache login: fails now when the cache holds no valid ticket
        if settings.keytab is not None:  # get the TGT now, so a bad keytab or KDC fails before Kafka is asked
            gssapi.raw.store_cred_into({"ccache": os.environ["KRB5CCNAME"]}, credentials, usage="initiate",
                                       overwrite=True)
    except gssapi.exceptions.GSSError as exc:
        raise classify(exc.gen_message(), settings) from None


def classify(message: str, settings: KerberosSettings) -> LeaderElectionError:
    """A GSS-API failure as the exit code it deserves; the message names settings, never secrets."""
    text = message.rpartition("Minor")[2].lower() or message.lower()  # the mechanism's own reason
    where = "the keyTab in sasl.jaas.config" if settings.keytab else "the Kerberos ticket cache"
    if "cannot contact any kdc" in text or "cannot find kdc" in text or "connection refused" in text:
        return UnreachableError("Could not reach the Kerberos KDC", hint="Check the KDC in krb5.conf "
                                "(KRB5_CONFIG) and the network.")
    in_keytab = "key table entry not found" in text or "no key table entry" in text
    if in_keytab or settings.keytab and "no credentials cache found" in text:  # MIT falls back to the cache
        return InputError(f"The principal in sasl.jaas.config is not in {where}",
                          hint="Check principal= against klist -kt on the keytab.")
    if any(words in text for words in ("no credentials", "credentials available", "expired")) or \
            "credentials cache" in text and "not found" in text:
        return AuthError(f"No valid Kerberos ticket in {where}", hint="Run kinit (or use a keytab login).")
    if any(words in text for words in ("preauthentication failed", "not found in kerberos database", "revoked",
                                       "integrity check failed")):
        return AuthError("The Kerberos KDC refused the credentials",
                         hint="Check the principal and that the keytab is current (its key version).")
    reason = text.split("(", 1)[0].strip(" :0123456789)") or "unknown error"  # no path from the config file
    return AuthError(f"Kerberos login failed: {reason}",
                     hint="Check krb5.conf (KRB5_CONFIG), the principal and the keytab.")
