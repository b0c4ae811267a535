"""The TLS settings both clients share: one ``ssl.SSLContext`` made from the arguments."""

from __future__ import annotations

import io
import socket as socketlib
import ssl
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


def tls_context(tls: bool, socket: str | None, ca_file: str | None, cert_file: str | None,
                key_file: str | None) -> ssl.SSLContext | None:
    """The client context for ``tls=True`` (None without TLS); ValueError for a bad mix.

    The server's certificate is verified against ``ca_file`` (else the system's CAs) and
    its name against the host; TLS 1.2 is the least version. ``cert_file`` (with
    ``key_file``, or a key inside it) is shown to a server that asks for one (mutual TLS).
    The files are read here, so a missing or unreadable one raises at once (OSError,
    ssl.SSLError).
    """
    if not tls:
        if ca_file is not None or cert_file is not None or key_file is not None:
            raise ValueError("ca_file, cert_file and key_file need tls=True")
        return None
    if socket is not None:
        raise ValueError("tls=True is for host=H, port=P, not a Unix socket")
    if key_file is not None and cert_file is None:
        raise ValueError("key_file needs cert_file")
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    if cert_file is not None:
        context.load_cert_chain(cert_file, key_file)
    return context


_RECV_BYTES = 1 << 16


class TlsSocket:
    """A TLS client connection over a connected socket, for one reader and many writers.

    An ``ssl.SSLSocket`` must not be read in one thread while another writes it (OpenSSL's
    SSL objects are not thread-safe; under TLS 1.3 a write racing the reader's handling of
    the server's session tickets can be lost). Here the SSL object works on memory buffers
    under a lock, and only the plain socket waits: the reader in ``recv``, a writer in
    ``sendall``. Bytes leave in the order they were encrypted (``_send_lock``).
    """

    def __init__(self, sock: socketlib.socket, context: ssl.SSLContext, server_hostname: str) -> None:
        """Do the handshake on ``sock`` (its timeout applies); ssl.SSLError/OSError on failure."""
        self._sock = sock
        self._incoming = ssl.MemoryBIO()
        self._outgoing = ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing, server_side=False,
                                     server_hostname=server_hostname)
        self._tls_lock = threading.Lock()  # the SSL object and its two buffers
        self._send_lock = threading.Lock()  # what was encrypted is sent in that order
        self._failure: ssl.SSLError | None = None  # what ended the TLS session (an alert)
        self._handshake()

    def _handshake(self) -> None:
        """Run the handshake to its end (the client's alert, if it fails, is sent)."""
        while True:
            try:
                self._tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                data = self._sock.recv(_RECV_BYTES)
                if not data:
                    raise ConnectionResetError(
                        "the server closed the connection during the TLS handshake") from None
                self._incoming.write(data)
            except ssl.SSLError:
                try:
                    self._flush()
                except OSError:
                    pass
                raise
        self._flush()

    def _flush(self) -> None:
        """Send what the SSL object has written to its outgoing buffer."""
        with self._send_lock:
            with self._tls_lock:
                data = self._outgoing.read()
            if data:
                self._sock.sendall(data)

    def sendall(self, data: bytes) -> None:
        """Encrypt ``data`` and send all of it."""
        with self._send_lock:
            with self._tls_lock:
                try:
                    view = memoryview(data)
                    while view:
                        view = view[self._tls.write(view):]
                except ssl.SSLError as exc:
                    if self._failure is None:
                        raise
                    # The session ended while reading (say the server's "certificate
                    # required" alert): that is the reason, not this write's "closed".
                    raise ConnectionResetError(str(self._failure)) from exc
                encrypted = self._outgoing.read()
            self._sock.sendall(encrypted)

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes of plain text, waiting for them; b"" at the end."""
        while True:
            with self._tls_lock:
                try:
                    data: bytes | None = self._tls.read(size)
                except ssl.SSLWantReadError:
                    data = None
                except ssl.SSLZeroReturnError:  # the server's close_notify
                    data = b""
                except ssl.SSLError as exc:
                    self._failure = exc
                    raise
                answer = self._outgoing.pending > 0
            if answer:
                self._flush()  # what reading made the SSL object say (a key update, say)
            if data is not None:
                return data
            raw = self._sock.recv(_RECV_BYTES)
            if not raw:
                return b""
            with self._tls_lock:
                self._incoming.write(raw)

    def makefile(self, mode: str) -> io.BufferedReader:
        """A buffered reader of the plain text (``mode`` must be "rb")."""
        if mode != "rb":
            raise ValueError("TlsSocket.makefile reads only: mode 'rb'")
        return io.BufferedReader(_TlsReader(self))

    def settimeout(self, timeout: float | None) -> None:
        """The plain socket's timeout."""
        self._sock.settimeout(timeout)

    def shutdown(self, how: int) -> None:
        """Shut the plain socket down (a reader waiting in ``recv`` gets b"")."""
        self._sock.shutdown(how)

    def close(self) -> None:
        """Close the plain socket."""
        self._sock.close()


class _TlsReader(io.RawIOBase):
    """The raw stream under ``TlsSocket.makefile``."""

    def __init__(self, tls: TlsSocket) -> None:
        super().__init__()
        self._tls = tls

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        data = self._tls.recv(len(view))
        view[:len(data)] = data
        return len(data)
