"""A minimal LSP client over pipes for the protocol tests and the latency benchmark:
frames JSON-RPC messages, reads the server's output on a thread, and waits for messages
matching a predicate (with a timeout, so a silent server fails a test instead of hanging it)."""
import json
import os
import queue
import subprocess
import threading
import time


def uri(path):
    return "file://" + os.path.abspath(path)


class Client:
    def __init__(self, binary, *args, cwd=None):
        self.proc = subprocess.Popen([binary, "server", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd)
        self.inbox = queue.Queue()
        self.seen = []  # every message, for the messages a test did not wait for
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            self._read_frames()
        except (ValueError, OSError):  # the test closed the pipe itself
            self.inbox.put(None)

    def _read_frames(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            body = out.read(length)
            self.inbox.put((time.monotonic(), json.loads(body)))

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def frame(self, message):
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def send(self, message):
        self.send_raw(self.frame(message))

    def notify(self, method, params=None):
        self.send({"jsonrpc": "2.0", "method": method, "params": params if params is not None else {}})

    def request(self, method, params=None, send=True):
        rid = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params if params is not None else {}}
        if send:
            self.send(message)
        return rid, message

    def wait(self, predicate, timeout=20.0, what="a message"):
        """The first message (not yet consumed) for which predicate holds, with its arrival time."""
        for i, (at, m) in enumerate(self.seen):
            if predicate(m):
                del self.seen[i]
                return at, m
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"timed out after {timeout} s waiting for {what}")
            try:
                item = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if item is None:
                raise EOFError(f"the server closed its output while a test waited for {what}")
            if predicate(item[1]):
                return item
            self.seen.append(item)

    def response(self, rid, timeout=20.0):
        return self.wait(lambda m: m.get("id") == rid and "method" not in m, timeout, f"the response to {rid}")[1]

    def call(self, method, params=None, timeout=20.0):
        rid, _ = self.request(method, params)
        return self.response(rid, timeout)

    def diagnostics(self, path, timeout=20.0, version=None):
        target = uri(path)

        def match(m):
            return (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == target
                    and (version is None or m["params"].get("version") == version))
        return self.wait(match, timeout, f"diagnostics for {path}")

    def initialize(self, root, options=None, utf8=False):
        caps = {"general": {"positionEncodings": ["utf-8", "utf-16"]}} if utf8 else {}
        response = self.call("initialize", {"processId": os.getpid(), "rootUri": uri(root), "capabilities": caps,
                                          "initializationOptions": options or {}})
        self.notify("initialized")
        return response.get("result", response)

    def open(self, path, text=None, version=1):
        if text is None:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri(path), "languageId": "python",
                                                              "version": version, "text": text}})

    def change(self, path, version, changes):
        self.notify("textDocument/didChange", {"textDocument": {"uri": uri(path), "version": version},
                                               "contentChanges": changes})

    def code_actions(self, path, line, only=None):
        """The code actions for a cursor at the start of `line` (0-based)."""
        return self.code_actions_for(uri(path), line, only)

    def code_actions_for(self, document_uri, line, only=None):
        """code_actions for a document named by its URI (a notebook cell has no path)."""
        context = {"diagnostics": []}
        if only:
            context["only"] = only
        at = {"line": line, "character": 0}
        return self.call("textDocument/codeAction", {"textDocument": {"uri": document_uri},
                                                     "range": {"start": at, "end": at}, "context": context})

    def close(self, timeout=10.0):
        """shutdown + exit; returns the exit code."""
        self.call("shutdown")
        self.notify("exit")
        return self.proc.wait(timeout=timeout)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def apply_edits(text, edits):
    """Applies LSP TextEdits (UTF-16 or UTF-8 positions on ASCII text) to text."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(p):
        return starts[p["line"]] + p["character"]
    for e in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        a, b = offset(e["range"]["start"]), offset(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
    return text


def full_range_of(text, needle):
    """The LSP range of the first occurrence of needle in (ASCII) text."""
    at = text.index(needle)
    line = text.count("\n", 0, at)
    col = at - (text.rfind("\n", 0, at) + 1)
    end = at + len(needle)
    end_line = text.count("\n", 0, end)
    end_col = end - (text.rfind("\n", 0, end) + 1)
    return {"start": {"line": line, "character": col}, "end": {"line": end_line, "character": end_col}}
