"""The server side of TLS over a plain asyncio stream, driven through `ssl.SSLObject` and memory BIOs.

asyncio's own TLS (`start_server(ssl=...)`) drops what OpenSSL wrote when a server-side handshake
fails, so a refused client never learns why. Kafka's `SslTransportLayer` flushes it before closing:
the client reads the alert (certificate_required for a missing client certificate, unknown_ca or
bad_certificate for an untrusted one). Driving TLS here does the same: `handshake` sends what OpenSSL
wrote, the alert too, before it raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any

READ_SIZE = 65_536


class TlsStream:
    """One accepted connection's TLS: `handshake` first, then `readexactly`, `write`, `drain`, `close`
    as the plain stream's reader and writer have them."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, context: ssl.SSLContext):
        self._reader, self._writer = reader, writer
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._plain = bytearray()  # decrypted bytes not read yet
        self._established = False
        self._closed = False

    async def handshake(self) -> None:
        """Complete the server's side of the handshake. On failure what OpenSSL wrote (its alert) is sent
        first, then the `ssl.SSLError` raised; a client gone before the end is `ConnectionResetError`."""
        while True:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                await self._send_pending()
                if not await self._receive():
                    raise ConnectionResetError("the client left during the TLS handshake") from None
            except ssl.SSLError:
                await self._send_pending()
                raise
            else:
                self._established = True
                await self._send_pending()  # the server's last flight (and TLS 1.3 session tickets)
                return

    async def readexactly(self, n: int) -> bytes:
        """`n` decrypted bytes; `asyncio.IncompleteReadError` when the connection ends before them."""
        while len(self._plain) < n:
            try:
                chunk = self._tls.read(READ_SIZE)
            except ssl.SSLWantReadError:
                await self._send_pending()
                if not await self._receive():
                    raise asyncio.IncompleteReadError(bytes(self._plain), n) from None
                continue
            except ssl.SSLZeroReturnError:  # the client's close_notify
                raise asyncio.IncompleteReadError(bytes(self._plain), n) from None
            if not chunk:
                raise asyncio.IncompleteReadError(bytes(self._plain), n)
            self._plain += chunk
        data = bytes(self._plain[:n])
        del self._plain[:n]
        return data

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[self._tls.write(view):]
        self._writer.write(self._outgoing.read())

    async def drain(self) -> None:
        await self._writer.drain()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._writer.get_extra_info(name, default)

    def close(self) -> None:
        """Send close_notify (once established) and close the connection; closing twice does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._established and not self._writer.is_closing():
            with contextlib.suppress(ssl.SSLError):  # it waits for the client's close_notify: not read
                self._tls.unwrap()
            self._writer.write(self._outgoing.read())
        self._writer.close()

    async def _send_pending(self) -> None:
        data = self._outgoing.read()
        if data:
            self._writer.write(data)
            await self._writer.drain()

    async def _receive(self) -> bool:
        """Feed the next bytes the client sent to OpenSSL; False at the end of the connection."""
        data = await self._reader.read(READ_SIZE)
        if data:
            self._incoming.write(data)
        return bool(data)
