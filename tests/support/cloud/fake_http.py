"""What the Bedrock and Vertex AI fakes share: the HTTP server and handler, the request log and the
scripted answers (Journal), a request read whole, replies whole or chunked, the port file.

An app (the fake's own) has handle(req) and control(req), each answering a Reply; serve() runs it on
127.0.0.1 until SIGTERM.
"""

import json
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DISCONNECT = object()  # a stream item: drop the connection here


def parse_json(data):
    """Return (True, value) when data is JSON, else (False, text)."""
    text = data.decode("utf-8", errors="replace")
    try:
        return True, json.loads(text)
    except ValueError:
        return False, text


def write_port_file(path, port):
    with open(path + ".tmp", "w", encoding="ascii") as out:
        out.write(f"{port}\n")
    os.replace(path + ".tmp", path)


class Journal:
    """Scripted response queues and the request log, shared by threads."""

    def __init__(self, log_path):
        self.lock = threading.Lock()
        self.queues = {}
        self.entries = []
        self.log_file = open(log_path, "a", encoding="utf-8") if log_path else None

    def record(self, entry):
        line = json.dumps(entry)
        with self.lock:
            self.entries.append(entry)
            if self.log_file:
                self.log_file.write(line + "\n")
                self.log_file.flush()

    def enqueue(self, route, responses):
        with self.lock:
            self.queues.setdefault(route, deque()).extend(responses)

    def pop(self, route):
        with self.lock:
            queue = self.queues.get(route)
            return queue.popleft() if queue else None

    def snapshot(self):
        with self.lock:
            return list(self.entries)

    def reset(self):
        with self.lock:
            self.queues.clear()
            self.entries.clear()
            if self.log_file:
                self.log_file.truncate(0)


class Request:
    """One received request, read fully from the handler."""

    def __init__(self, handler):
        self.method = handler.command
        self.raw_path, _, self.query = handler.path.partition("?")
        self.headers = {}
        for name, value in handler.headers.items():
            name = name.lower()
            old = self.headers.get(name)
            self.headers[name] = value if old is None else old + "," + value
        self.body = read_body(handler)
        self.is_json, self.parsed = parse_json(self.body)
        self.extra = {}

    def json_object(self):
        return self.parsed if self.is_json and isinstance(self.parsed, dict) else None

    def log_entry(self, route, auth):
        entry = {"method": self.method, "path": self.raw_path,
                 "query": self.query, "headers": self.headers,
                 "body": self.parsed, "route": route, "auth": auth}
        entry.update(self.extra)
        return entry


def read_body(handler):
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        return read_chunked(handler.rfile)
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length > 0 else b""


def read_chunked(rfile):
    data = b""
    while True:
        size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            break
        data += rfile.read(size)
        rfile.readline()
    while rfile.readline() not in (b"\r\n", b"\n", b""):
        pass
    return data


class Reply:
    """What goes on the wire: a whole body, or a chunked stream of items."""

    def __init__(self, status, content_type, body=b"", headers=None):
        self.status = status
        self.content_type = content_type
        self.body = body
        self.headers = dict(headers or {})
        self.stream = None          # list of bytes | float (sleep) | DISCONNECT
        self.split_every = 0
        self.delay_s = 0.0


class ChunkWriter:
    """Writes chunked transfer encoding, optionally in fixed-size pieces."""

    def __init__(self, wfile, split_every):
        self.wfile = wfile
        self.size = split_every
        self.pending = b""

    def write(self, data):
        if not self.size:
            self._chunk(data)
            return
        self.pending += data
        while len(self.pending) >= self.size:
            piece, self.pending = self.pending[:self.size], self.pending[self.size:]
            self._chunk(piece)
            time.sleep(0.005)

    def flush(self):
        self._chunk(self.pending)
        self.pending = b""

    def finish(self):
        self.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, data):
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()


def json_resp(status, body, headers=None):
    return {"status": status, "body": body, "headers": headers or {}}


def text_resp(status, text, content_type="text/plain", headers=None):
    return {"status": status, "raw": text, "content_type": content_type,
            "headers": headers or {}}


class Handler(BaseHTTPRequestHandler):
    """Reads each request whole and answers what the app says (`server.app`: handle and control)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass

    def do_GET(self):  # noqa: N802 - http.server naming
        try:
            self.send_reply(self.make_reply())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def make_reply(self):
        """The app's reply; a bug in the fake or a bad script gives a 500."""
        try:
            req = Request(self)
            if req.raw_path.startswith("/_fake/"):
                return self.server.app.control(req)
            return self.server.app.handle(req)
        except Exception:  # noqa: BLE001 - report, keep serving
            text = traceback.format_exc()
            sys.stderr.write(text)
            self.close_connection = True
            return Reply(500, "text/plain", ("fake error:\n" + text).encode())

    do_POST = do_PUT = do_DELETE = do_PATCH = do_GET

    def send_reply(self, reply):
        if reply.delay_s > 0:
            time.sleep(reply.delay_s)
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, str(value))
        if reply.stream is None:
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.send_stream(reply)

    def send_stream(self, reply):
        writer = ChunkWriter(self.wfile, reply.split_every)
        for item in reply.stream:
            if item is DISCONNECT:
                writer.flush()
                self.close_connection = True
                return
            if isinstance(item, float):
                writer.flush()
                time.sleep(item)
                continue
            writer.write(item)
        writer.finish()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def serve(app, port_file, name):
    """Runs `app` on 127.0.0.1 (an ephemeral port, written to `port_file`) until SIGTERM or SIGINT."""
    server = Server(("127.0.0.1", 0), type("Handler", (Handler,), {"server_version": name}))
    server.app = app
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
    write_port_file(port_file, server.server_address[1])
    try:
        server.serve_forever()
    finally:
        server.server_close()
