"""Protocol-level tests of `torchlint server`: raw JSON-RPC over pipes.
Usage: protocol_test.py TORCHLINT_BINARY SOURCE_DIR
Each test starts its own server on a fresh copy of tests/lsp/project; the server must
answer every request, report errors the JSON-RPC way, and never crash or hang."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Client, apply_edits, full_range_of, uri  # noqa: E402

BINARY, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
NOT_INITIALIZED, CANCELLED = -32002, -32800


class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="torchlint-lsp-")
        self.project = os.path.join(self.dir, "project")
        shutil.copytree(os.path.join(SOURCE, "tests/lsp/project"), self.project)
        self.train = os.path.join(self.project, "train.py")
        self.utils = os.path.join(self.project, "utils.py")
        self.clients = []

    def client(self, options=None, utf8=False, initialize=True):
        c = Client(BINARY, "--debounce-ms", "20", cwd=self.dir)
        self.clients.append(c)
        if initialize:
            c.initialize(self.project, options, utf8)
        return c

    def open_train(self, c):
        """Opens train.py in `c`; returns its text and the first diagnostics for it."""
        text = self.text(self.train)
        c.open(self.train, text)
        return text, c.diagnostics(self.train)[1]

    def text(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def cleanup(self):
        for c in self.clients:
            c.kill()
            # A crash is a signal exit: never acceptable, whatever the test did.
            assert c.proc.returncode is None or c.proc.returncode >= 0 or c.proc.returncode == -signal.SIGKILL, \
                f"server died of signal {-c.proc.returncode}"
        shutil.rmtree(self.dir, ignore_errors=True)


def codes(message):
    return sorted(d["code"] for d in message["params"]["diagnostics"])


def expect_error(response, code):
    assert "error" in response, f"expected error {code}, got {response}"
    assert response["error"]["code"] == code, f"expected error {code}, got {response['error']}"


TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
def lifecycle_and_capabilities(env):
    c = env.client(initialize=False)
    # Before initialize: requests are refused with ServerNotInitialized.
    expect_error(c.call("textDocument/hover", {}), NOT_INITIALIZED)
    result = c.initialize(env.project, utf8=True)
    caps = result["capabilities"]
    assert result["serverInfo"]["name"] == "torchlint"
    assert caps["positionEncoding"] == "utf-8", caps
    assert caps["textDocumentSync"]["change"] == 2
    assert caps["hoverProvider"] is True
    assert "torchlint.fixAll" in caps["executeCommandProvider"]["commands"]
    assert caps["notebookDocumentSync"]["notebookSelector"][0]["notebook"]["notebookType"] == "jupyter-notebook"
    expect_error(c.call("initialize", {"capabilities": {}}), INVALID_REQUEST)  # only once
    assert c.call("shutdown")["result"] is None
    expect_error(c.call("textDocument/hover", {}), INVALID_REQUEST)  # after shutdown
    c.notify("exit")
    assert c.proc.wait(timeout=10) == 0


@test
def utf16_is_the_default(env):
    c = env.client()
    # No encodings offered: the protocol's default.
    c2 = env.client(initialize=False)
    result = c2.initialize(env.project)
    assert result["capabilities"]["positionEncoding"] == "utf-16"
    assert c.close() == 0 and c2.close() == 0


@test
def open_change_fix_cycle(env):
    c = env.client()
    text, m = env.open_train(c)
    assert codes(m) == ["TL304"], codes(m)
    d = m["params"]["diagnostics"][0]
    assert d["source"] == "torchlint" and d["severity"] in (1, 2)
    assert d["codeDescription"]["href"].endswith("/rules/unsafe-torch-load"), d
    assert d["range"]["start"]["line"] == 18, d["range"]
    # An incremental change that removes the problem: empty diagnostics.
    rng = full_range_of(text, "torch.load(path)")
    c.change(env.train, 2, [{"range": rng, "text": "torch.load(path, weights_only=True)"}])
    _, m = c.diagnostics(env.train, version=2)
    assert codes(m) == [], codes(m)
    # Put it back (a full-text change this time): the finding returns.
    c.change(env.train, 3, [{"text": text}])
    _, m = c.diagnostics(env.train, version=3)
    assert codes(m) == ["TL304"], codes(m)
    # The code actions on that line: the safe fix and the suppression.
    line = m["params"]["diagnostics"][0]["range"]["start"]["line"]
    r = c.code_actions(env.train, line)
    actions = {a["title"]: a for a in r["result"]}
    fix = next(a for a in r["result"] if a.get("isPreferred"))
    assert "weights_only" in fix["title"], list(actions)
    fixed = apply_edits(text, fix["edit"]["changes"][uri(env.train)])
    assert "torch.load(path, weights_only=True)" in fixed, fixed
    suppress = actions["Suppress TL304 on this line"]
    suppressed = apply_edits(text, suppress["edit"]["changes"][uri(env.train)])
    assert "model.load_state_dict(torch.load(path))  # noqa: TL304\n" in suppressed
    # The suppressed text really is clean, and the fixed one too.
    c.change(env.train, 4, [{"text": suppressed}])
    _, m = c.diagnostics(env.train, version=4)
    assert codes(m) == [], codes(m)
    c.change(env.train, 5, [{"text": fixed}])
    _, m = c.diagnostics(env.train, version=5)
    assert codes(m) == [], codes(m)
    # `context.only` filters by kind: the fix-all kind alone has nothing to do on clean text.
    c.change(env.train, 6, [{"text": text}])
    c.diagnostics(env.train, version=6)
    r = c.code_actions(env.train, 0, only=["source.fixAll"])
    assert [a["kind"] for a in r["result"]] == ["source.fixAll.torchlint"], r
    assert c.close() == 0


LOOPS = """import torch


def fit(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        scheduler.step()
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                 "scheduler": scheduler.state_dict(), "epoch": epoch}
        torch.save(state, "ckpt.pt")


if __name__ == "__main__":
    fit(None, [], 1)
"""


def check_findings(path):
    """`torchlint check` on the file as it is on disk, as comparable tuples: rule, message,
    start (0-based line, 0-based column) and related locations (start and message)."""
    run = subprocess.run([BINARY, "check", path, "--output-format", "sarif", "--no-cache"], cwd=os.path.dirname(path),
                         capture_output=True, text=True, timeout=60)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    out = []
    for result in json.loads(run.stdout)["runs"][0]["results"]:
        region = result["locations"][0]["physicalLocation"]["region"]
        related = tuple((r["physicalLocation"]["region"]["startLine"] - 1, r["physicalLocation"]["region"]["startColumn"] - 1,
                         r["message"]["text"]) for r in result.get("relatedLocations", []))
        out.append((result["ruleId"], result["message"]["text"], region["startLine"] - 1, region["startColumn"] - 1,
                    related))
    return sorted(out)


def server_findings(message):
    out = []
    for d in message["params"]["diagnostics"]:
        related = tuple((r["location"]["range"]["start"]["line"], r["location"]["range"]["start"]["character"],
                         r["message"]) for r in d.get("relatedInformation", []))
        out.append((d["code"], d["message"], d["range"]["start"]["line"], d["range"]["start"]["character"], related))
    return sorted(out)


@test
def findings_match_check_after_each_edit(env):
    # The server lints the editor's text incrementally (re-parse from the last tree, the
    # project's context kept); after every edit its findings must be exactly those of
    # `torchlint check` on the same text, related locations included.
    path = os.path.join(env.project, "loops.py")
    text = LOOPS
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    c = env.client()
    c.open(path, text)
    _, m = c.diagnostics(path)
    assert server_findings(m) == check_findings(path)
    # Each edit comments a line out (or back in, or rewrites it): one incremental change.
    edits = [("            optimizer.zero_grad()", "#           optimizer.zero_grad()"),   # TL103
             ("#           optimizer.zero_grad()", "            optimizer.zero_grad()"),
             ("        scheduler.step()", "#       scheduler.step()"),                     # TL105
             ("#       scheduler.step()", "        scheduler.step()"),
             (' "optimizer": optimizer.state_dict(),', ""),                                # TL301
             ("            optimizer.step()", "            scheduler.step()\n            optimizer.step()"),  # TL106
             ("            loss.backward()\n            scheduler.step()\n            optimizer.step()",
              "            optimizer.step()\n            loss.backward()"),              # TL104
             ]
    seen_codes, seen_related = set(), 0
    for version, (old, new) in enumerate(edits, start=2):
        assert old in text, old
        c.change(path, version, [{"range": full_range_of(text, old), "text": new}])
        text = text.replace(old, new, 1)
        _, m = c.diagnostics(path, version=version)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        got, want = server_findings(m), check_findings(path)
        assert got == want, f"after edit {version - 1}:\nserver {got}\ncheck  {want}"
        seen_codes |= {g[0] for g in got}
        seen_related += sum(1 for g in got if g[4])
    # The edits did make the rules report, some with a second location.
    assert {"TL103", "TL105", "TL301"} <= seen_codes, seen_codes
    assert seen_related >= 2, seen_related
    assert c.close() == 0


@test
def requests_wait_for_the_current_text(env):
    c = env.client()
    text, m = env.open_train(c)
    line = m["params"]["diagnostics"][0]["range"]["start"]["line"]
    # The fix typed in, and code actions asked for at once: the answer is about the new
    # text (no TL304 left to fix), not the findings of the old one.
    rng = full_range_of(text, "torch.load(path)")
    c.change(env.train, 2, [{"range": rng, "text": "torch.load(path, weights_only=True)"}])
    r = c.code_actions(env.train, line)
    assert r["result"] == [], [a["title"] for a in r["result"]]
    assert c.close() == 0


@test
def hover_shows_the_rule_doc(env):
    c = env.client()
    _, m = env.open_train(c)
    start = m["params"]["diagnostics"][0]["range"]["start"]
    r = c.call("textDocument/hover", {"textDocument": {"uri": uri(env.train)}, "position": start})
    assert r["result"]["contents"]["kind"] == "markdown"
    assert r["result"]["contents"]["value"].startswith("# TL304"), r["result"]["contents"]["value"][:80]
    # Off the finding: nothing.
    r = c.call("textDocument/hover", {"textDocument": {"uri": uri(env.train)}, "position": {"line": 0, "character": 0}})
    assert r["result"] is None, r
    assert c.close() == 0


@test
def fix_all_command(env):
    c = env.client()
    text, _ = env.open_train(c)
    rid, _ = c.request("workspace/executeCommand", {"command": "torchlint.fixAll", "arguments": [uri(env.train)]})
    _, apply = c.wait(lambda m: m.get("method") == "workspace/applyEdit", what="workspace/applyEdit")
    c.send({"jsonrpc": "2.0", "id": apply["id"], "result": {"applied": True}})
    assert c.response(rid)["result"] is None
    fixed = apply_edits(text, apply["params"]["edit"]["changes"][uri(env.train)])
    assert "torch.load(path, weights_only=True)" in fixed
    expect_error(c.call("workspace/executeCommand", {"command": "no.such.command", "arguments": []}), INVALID_PARAMS)
    assert c.close() == 0


@test
def add_to_baseline(env):
    c = env.client({"baseline": "torchlint-baseline.json"})
    _, m = env.open_train(c)
    line = m["params"]["diagnostics"][0]["range"]["start"]["line"]
    action = next(a for a in c.code_actions(env.train, line)["result"] if a["title"].startswith("Add TL304 to the baseline"))
    command = action["command"]
    assert c.call("workspace/executeCommand", {"command": command["command"], "arguments": command["arguments"]}) \
        .get("result", "error") is None
    # The finding is known debt now: published again without it, and written as
    # `check --write-baseline` writes it, so the command line agrees.
    _, m = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                  and m["params"]["uri"] == uri(env.train) and codes(m) == [], what="diagnostics without TL304")
    baseline = os.path.join(env.project, "torchlint-baseline.json")
    with open(baseline, encoding="utf-8") as f:
        entries = json.load(f)["entries"]
    assert [(e["rule"], e["path"], e["count"]) for e in entries] == [("TL304", "train.py", 1)], entries
    check = subprocess.run([BINARY, "check", "train.py", "--baseline", "torchlint-baseline.json", "--no-cache"],
                           cwd=env.project, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    # A finding that is not there: an error, and the file is left alone.
    r = c.call("workspace/executeCommand", {"command": "torchlint.addToBaseline",
                                            "arguments": [uri(env.train), "TL401", {"line": 0, "character": 0}]})
    expect_error(r, INVALID_PARAMS)
    assert c.close() == 0


@test
def project_facts_follow_an_unsaved_helper(env):
    c = env.client()
    _, m = env.open_train(c)
    assert "TL101" not in codes(m)
    utils_text = env.text(env.utils)
    c.open(env.utils, utils_text)
    c.diagnostics(env.utils)
    # set_seed stops seeding torch (unsaved): train.py, untouched, now misses its seed.
    rng = full_range_of(utils_text, "torch.manual_seed(seed)")
    c.change(env.utils, 2, [{"range": rng, "text": "pass"}])
    _, m = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                  and m["params"]["uri"] == uri(env.train) and "TL101" in codes(m), what="TL101 in train.py")
    # Undo: the finding goes away again.
    c.change(env.utils, 3, [{"text": utils_text}])
    _, m = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                  and m["params"]["uri"] == uri(env.train) and "TL101" not in codes(m), what="TL101 gone")
    assert c.close() == 0


@test
def a_new_import_brings_its_module_into_the_project_pass(env):
    # The server re-uses a project's context files between lints of the same imports; a
    # changed import must find them again.
    with open(os.path.join(env.project, "helper2.py"), "w", encoding="utf-8") as f:
        f.write("import torch\n\n\ndef prepare(seed):\n    torch.manual_seed(seed)\n")
    c = env.client()
    text = env.text(env.train).replace("    utils.set_seed(0)\n", "    pass\n")
    c.open(env.train, text)
    _, m = c.diagnostics(env.train)
    assert codes(m) == ["TL101", "TL304"], codes(m)
    edited = text.replace("import utils\n", "import helper2\n").replace("    pass\n", "    helper2.prepare(0)\n")
    c.change(env.train, 2, [{"text": edited}])
    _, m = c.diagnostics(env.train, version=2)
    assert codes(m) == ["TL304"], codes(m)
    assert c.close() == 0


@test
def initialization_options_select_and_ignore(env):
    c = env.client({"ignore": ["TL304"], "extend-select": ["TL001"]})
    c.open(env.train, env.text(env.train).replace("lr=0.01)", "lr=0.01)  # noqa: TL102"))
    _, m = c.diagnostics(env.train)
    assert codes(m) == ["TL001"], codes(m)  # TL304 ignored; the opt-in TL001 on
    assert c.close() == 0
    # An unknown selector: an error message for the user, no crash, no findings invented.
    c = env.client({"select": ["TL999"]})
    c.open(env.train)
    _, m = c.wait(lambda m: m.get("method") == "window/showMessage", what="showMessage")
    assert "TL999" in m["params"]["message"] and m["params"]["type"] == 1
    assert c.close() == 0


@test
def configuration_file_is_read_again_on_save(env):
    c = env.client()
    _, m = env.open_train(c)
    assert codes(m) == ["TL304"]
    config = os.path.join(env.project, "pyproject.toml")
    text = env.text(config).replace('ignore = ["TL602"]', 'ignore = ["TL602", "TL304"]')
    with open(config, "w", encoding="utf-8") as f:
        f.write(text)
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri(config)}})
    _, m = c.diagnostics(env.train)
    assert codes(m) == [], codes(m)
    assert c.close() == 0


@test
def malformed_messages_get_errors_not_crashes(env):
    c = env.client()
    c.send_raw(b"Content-Length: 9\r\n\r\n{not json")
    _, m = c.wait(lambda m: "error" in m and m["error"]["code"] == PARSE_ERROR, what="parse error")
    assert m["id"] is None
    c.send_raw(b"Content-Type: text/plain\r\n\r\n")  # no Content-Length
    c.wait(lambda m: "error" in m and m["error"]["code"] == PARSE_ERROR, what="parse error for bad headers")
    c.send_raw(b"Content-Length: abc\r\n\r\n")
    c.wait(lambda m: "error" in m and m["error"]["code"] == PARSE_ERROR, what="parse error for a bad length")
    body = b"[1, 2]"
    c.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    c.wait(lambda m: "error" in m and m["error"]["code"] == INVALID_REQUEST, what="invalid request")
    expect_error(c.call("no/such/method"), METHOD_NOT_FOUND)
    c.notify("no/such/notification")  # ignored silently
    # Wrong parameter types: InvalidParams for requests, a log line for notifications.
    expect_error(c.call("textDocument/hover", {"textDocument": {"uri": 5}}), INVALID_PARAMS)
    expect_error(c.call("textDocument/codeAction", {"textDocument": {}}), INVALID_PARAMS)
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri(env.train)}})  # no text
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri(env.train), "version": 2},
                                        "contentChanges": [{"range": {"start": {}}, "text": 1}]})
    # Still serving.
    _, m = env.open_train(c)
    assert codes(m) == ["TL304"]
    assert c.close() == 0


@test
def unknown_and_unsaved_files(env):
    c = env.client()
    # Requests about a file that is not open: empty answers.
    ghost = uri(os.path.join(env.project, "ghost.py"))
    r = c.code_actions(os.path.join(env.project, "ghost.py"), 0)
    assert r["result"] == [], r
    assert c.call("textDocument/hover", {"textDocument": {"uri": ghost},
                                         "position": {"line": 0, "character": 0}})["result"] is None
    c.change(os.path.join(env.project, "ghost.py"), 2, [{"text": "x"}])  # not open: logged
    # A new file that exists only in the editor is linted from its text.
    new = os.path.join(env.project, "new_script.py")
    c.open(new, "import torch\nstate = torch.load('w.pt')\n")
    _, m = c.diagnostics(new)
    assert codes(m) == ["TL304"], codes(m)
    # A non-file URI is accepted and left alone.
    c.notify("textDocument/didOpen", {"textDocument": {"uri": "untitled:Untitled-1", "languageId": "python",
                                                       "version": 1, "text": "import torch\n"}})
    assert c.call("textDocument/hover", {"textDocument": {"uri": "untitled:Untitled-1"},
                                         "position": {"line": 0, "character": 0}})["result"] is None
    # Closing clears the file's diagnostics.
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri(new)}})
    _, m = c.diagnostics(new)
    assert codes(m) == []
    assert c.close() == 0


@test
def large_file_and_cancellation(env):
    c = env.client()
    # About 10 MB of Python with one finding at the end.
    chunk = "def f{n}(x):\n    return x * {n}\n\n\n"
    parts, size, n = [], 0, 0
    while size < 10_000_000:
        s = chunk.format(n=n)
        parts.append(s)
        size += len(s)
        n += 1
    big = os.path.join(env.project, "big.py")
    text = "import torch\n" + "".join(parts) + "state = torch.load('w.pt')\n"
    started = time.monotonic()
    c.open(big, text)
    # While the server lints it, a request and its cancellation arrive together.
    time.sleep(0.05)
    rid, hover = c.request("textDocument/hover", {"textDocument": {"uri": uri(big)},
                                                  "position": {"line": 0, "character": 0}}, send=False)
    c.send_raw(c.frame(hover) + c.frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}}))
    # The lint runs on a worker: other requests are answered meanwhile.
    asked = time.monotonic()
    assert c.code_actions(os.path.join(env.project, "ghost.py"), 0)["result"] == []
    answered = time.monotonic() - asked
    _, m = c.diagnostics(big, timeout=120)
    linted = time.monotonic() - started
    print(f"    10 MB file: first diagnostics after {linted:.2f} s; a request during the lint answered in "
          f"{answered * 1000:.0f} ms")
    assert answered < linted / 2, "the server did not answer while it linted"
    assert codes(m) == ["TL304"], codes(m)
    r = c.response(rid)
    expect_error(r, CANCELLED)
    assert c.close(timeout=60) == 0


@test
def notebook_opened_as_text(env):
    c = env.client()
    nb = os.path.join(env.project, "explore.ipynb")
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
            "source": ["import torch\n", "state = torch.load('w.pt')\n"]}
    text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    c.open(nb, text)
    _, m = c.diagnostics(nb)
    assert codes(m) == ["TL304"], codes(m)
    # Positions point into the JSON file, at the cell's line.
    line = m["params"]["diagnostics"][0]["range"]["start"]["line"]
    assert "torch.load" in text.split("\n")[line], text.split("\n")[line]
    # No edit that would put a Python comment into the JSON.
    titles = [a["title"] for a in c.code_actions(nb, line)["result"]]
    assert not any(t.startswith("Suppress") for t in titles), titles
    assert c.close() == 0


@test
def notebook_synchronised_by_cell(env):
    c = env.client()
    nb_uri = uri(os.path.join(env.project, "explore.ipynb"))
    cells = [("cell1", 2, "%matplotlib inline\nimport torch\n"), ("md", 1, "# Notes"),
             ("cell2", 2, "model = torch.nn.Linear(2, 2)\nstate = torch.load('w.pt')")]
    cell_uri = {name: nb_uri.replace("file://", "vscode-notebook-cell://") + "#" + name for name, _, _ in cells}
    c.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": nb_uri, "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": kind, "document": cell_uri[name]} for name, kind, _ in cells]},
        "cellTextDocuments": [{"uri": cell_uri[name], "languageId": "python" if kind == 2 else "markdown",
                               "version": 1, "text": text} for name, kind, text in cells]})

    def cell_diagnostics(name):
        return c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == cell_uri[name], what=f"diagnostics of {name}")[1]
    first, second = cell_diagnostics("cell1"), cell_diagnostics("cell2")
    assert codes(first) == [], codes(first)  # the magic is not a parse error
    assert codes(second) == ["TL304"], codes(second)
    assert second["params"]["diagnostics"][0]["range"]["start"] == {"line": 1, "character": 8}
    # Code actions on the cell: its safe fix and a suppression, as edits of the cell itself.
    r = c.code_actions_for(cell_uri["cell2"], 1)
    actions = {a["title"]: a for a in r["result"]}
    fix = next(a for a in r["result"] if a.get("isPreferred"))
    cell2_text = cells[2][2]
    fixed = apply_edits(cell2_text, fix["edit"]["changes"][cell_uri["cell2"]])
    assert fixed == "model = torch.nn.Linear(2, 2)\nstate = torch.load('w.pt', weights_only=True)", fixed
    suppress = actions["Suppress TL304 on this line"]
    suppressed = apply_edits(cell2_text, suppress["edit"]["changes"][cell_uri["cell2"]])
    assert suppressed.endswith("state = torch.load('w.pt')  # noqa: TL304"), suppressed
    assert not any("baseline" in t for t in actions), list(actions)
    # The cell's own hover works as a file's does.
    h = c.call("textDocument/hover", {"textDocument": {"uri": cell_uri["cell2"]}, "position": {"line": 1, "character": 10}})
    assert "TL304" in h["result"]["contents"]["value"], h
    # The fix typed into the second cell (an incremental change of its text).
    c.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": nb_uri, "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": cell_uri["cell2"], "version": 2}, "changes": [
            {"range": {"start": {"line": 1, "character": 25}, "end": {"line": 1, "character": 25}},
             "text": ", weights_only=True"}]}]}}})
    second = cell_diagnostics("cell2")
    assert codes(second) == [], codes(second)
    # A new cell inserted at the top with a finding of its own.
    c.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": nb_uri, "version": 3},
        "change": {"cells": {"structure": {
            "array": {"start": 0, "deleteCount": 0, "cells": [{"kind": 2, "document": cell_uri["cell1"] + "0"}]},
            "didOpen": [{"uri": cell_uri["cell1"] + "0", "languageId": "python", "version": 1,
                         "text": "import torch\nx = torch.load('a.pt')\n"}]}}}})
    new = c.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                 and m["params"]["uri"] == cell_uri["cell1"] + "0", what="diagnostics of the new cell")[1]
    assert codes(new) == ["TL304"] and new["params"]["diagnostics"][0]["range"]["start"]["line"] == 1, new
    c.notify("notebookDocument/didClose", {"notebookDocument": {"uri": nb_uri},
                                           "cellTextDocuments": [{"uri": u} for u in cell_uri.values()]})
    assert c.close() == 0


FAKE_CPP_FRONT_END = """#!/usr/bin/python3
# Stands in for torchlint-cpp: one finding per file, and a line per run in RUNS.
import json, sys
files = sys.argv[sys.argv.index("--") + 1:]
with open(RUNS, "a") as f:
    f.write(" ".join(files) + "\\n")
print(json.dumps([{"code": "TL402", "name": "hardcoded-cuda", "message": "seen by the C++ front-end",
                   "filename": name, "location": {"row": 2, "column": 3},
                   "end_location": {"row": 2, "column": 7}} for name in files]))
"""


@test
def cpp_files_are_linted_on_open_and_save_only(env):
    # C++ goes through torchlint-cpp (here a stand-in named by TORCHLINT_CPP, as the real
    # one is a Clang build): from the file on disk, so on open and save, not per keystroke.
    runs = os.path.join(env.dir, "runs.txt")
    fake = os.path.join(env.dir, "fake-torchlint-cpp")
    with open(fake, "w", encoding="utf-8") as f:
        f.write(FAKE_CPP_FRONT_END.replace("RUNS", repr(runs)))
    os.chmod(fake, 0o755)
    kernel = os.path.join(env.project, "kernel.cpp")
    text = "#include <torch/torch.h>\nauto x = torch::kCUDA;\n"
    with open(kernel, "w", encoding="utf-8") as f:
        f.write(text)
    os.environ["TORCHLINT_CPP"] = fake
    try:
        c = env.client()
    finally:
        del os.environ["TORCHLINT_CPP"]

    def run_count():
        return len(open(runs).read().splitlines()) if os.path.exists(runs) else 0
    c.open(kernel, text)
    _, m = c.diagnostics(kernel, version=1)
    assert codes(m) == ["TL402"], m
    assert m["params"]["diagnostics"][0]["range"]["start"] == {"line": 1, "character": 2}, m
    assert run_count() == 1
    # Typing: no run (the front-end would read the old file, and takes seconds).
    c.change(kernel, 2, [{"range": full_range_of(text, "auto"), "text": "auto y"}])
    _, py = env.open_train(c)  # a Python lint meanwhile does not run it either
    time.sleep(0.3)
    assert run_count() == 1, open(runs).read()
    # Saved: linted again, and its findings published for the saved version.
    with open(kernel, "w", encoding="utf-8") as f:
        f.write(text.replace("auto", "auto y"))
    c.notify("textDocument/didSave", {"textDocument": {"uri": uri(kernel)}})
    _, m = c.diagnostics(kernel, version=2)
    assert codes(m) == ["TL402"] and run_count() == 2, (m, run_count())
    c.notify("textDocument/didClose", {"textDocument": {"uri": uri(kernel)}})
    _, m = c.diagnostics(kernel)
    assert codes(m) == [], m
    assert c.close() == 0


@test
def client_disappears(env):
    # stdin closed without shutdown/exit: the server ends on its own, with code 1.
    c = env.client()
    c.open(env.train)
    c.diagnostics(env.train)
    c.proc.stdin.close()
    assert c.proc.wait(timeout=10) == 1
    # A client whose end of the server's output is closed: writing fails with EPIPE, and
    # the server ends with code 1 instead of dying of SIGPIPE.
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([BINARY, "server"], stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.DEVNULL)
    os.close(write_end)
    os.close(read_end)
    probe = Client.__new__(Client)
    proc.stdin.write(probe.frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}))
    proc.stdin.flush()
    try:
        assert proc.wait(timeout=10) == 1, proc.returncode
    finally:
        proc.kill()
    # exit without shutdown: code 1, as the protocol says.
    c = env.client()
    c.notify("exit")
    assert c.proc.wait(timeout=10) == 1


def main():
    failed = 0
    only = sys.argv[3:]
    for fn in TESTS:
        if only and fn.__name__ not in only:
            continue
        env = Env()
        started = time.monotonic()
        try:
            fn(env)
            env.cleanup()
            print(f"PASS {fn.__name__} ({time.monotonic() - started:.2f} s)")
        except Exception:
            failed += 1
            print(f"FAIL {fn.__name__}")
            traceback.print_exc(file=sys.stdout)
            for c in env.clients:
                c.kill()
                err = c.proc.stderr.read().decode(errors="replace") if c.proc.stderr else ""
                if err:
                    print("    server stderr:", err[-2000:])
            shutil.rmtree(env.dir, ignore_errors=True)
    ran = sum(1 for fn in TESTS if not only or fn.__name__ in only)
    print(f"{ran - failed}/{ran} protocol tests passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
