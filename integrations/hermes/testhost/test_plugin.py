"""Tests of the approve-tui Hermes plugin against the host stand-in.

    python3 -m unittest discover -s integrations/hermes/testhost -v

No approve-tui binary is needed: small /bin/sh fakes stand in for
`approve-tui hook hermes`.
"""

import dataclasses
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_SRC = os.path.join(os.path.dirname(HERE), "approve-tui")
HOST = os.path.join(HERE, "hermes_host.py")
sys.path.insert(0, HERE)

import hermes_host  # noqa: E402

PLUGIN_LOG = "hermes_plugins.approve_tui"

PRESENT_KEYS = {"event", "schema_version", "request_id", "digest", "command", "description",
                "pattern_key", "pattern_keys", "surface", "timeout_seconds", "allowed_choices",
                "session_key", "presented_at"}

# Fake `approve-tui hook hermes` bodies, and the choice the plugin must return.
ANSWERS = [
    ("once", """echo '{"choice":"once"}'""", "once"),
    ("once_after_noise", """echo 'starting'; echo; echo '{"choice":"once","reason":"ok"}'; echo""", "once"),
    ("deny", """echo '{"choice":"deny","reason":"x"}'""", "deny"),
    ("always", """echo '{"choice":"always"}'""", "deny"),
    ("session", """echo '{"choice":"session"}'""", "deny"),
    ("unknown_choice", """echo '{"choice":"maybe"}'""", "deny"),
    ("choice_not_string", """echo '{"choice":true}'""", "deny"),
    ("array", """echo '["once"]'""", "deny"),
    ("garbage", """echo 'approved: yes, go ahead'""", "deny"),
    ("garbage_after_once", """echo '{"choice":"once"}'; echo 'oops'""", "deny"),
    ("nothing", """exit 0""", "deny"),
    ("exit1", """echo '{"choice":"once"}'; exit 1""", "deny"),
    ("crash", """echo '{"choice":"once"}'; kill -9 $$""", "deny"),
    ("invalid_utf8", """printf '{"choice":"once","reason":"\\377"}\\n'""", "deny"),
    ("huge", """head -c 1100000 /dev/zero | tr '\\000' a; echo; echo '{"choice":"once"}'""", "deny"),
    ("no_stdin_read", """exec 0<&-; echo '{"choice":"once"}'""", "once"),
]


def setUpModule():
    # Keep the plugin's and the host's logs out of the test output; assertLogs
    # still sees them.
    for name in ("hermes_plugins", "hermes_host"):
        log = logging.getLogger(name)
        log.addHandler(logging.NullHandler())
        log.propagate = False
        log.setLevel(logging.INFO)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="approve-tui-hermes-")
        self.home = os.path.join(self.tmp, "home")
        self.bin = os.path.join(self.tmp, "bin")
        os.makedirs(self.bin)
        shutil.copytree(PLUGIN_SRC, os.path.join(self.home, "plugins", "approve-tui"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.saved_env = dict(os.environ)
        os.environ.pop("APPROVE_TUI_BIN", None)
        self.saved_constants = sys.modules.get("hermes_constants")

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved_env)
        if self.saved_constants is None:
            sys.modules.pop("hermes_constants", None)
        else:
            sys.modules["hermes_constants"] = self.saved_constants
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fake(self, name, body, directory=None):
        path = os.path.join(directory or self.bin, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
        return path

    def recorder(self, answer='{"choice":"once"}', post_answer='{"recorded":true}'):
        """A fake that records each call's stdin, argv and HERMES_HOME."""
        self.rec = os.path.join(self.tmp, "rec")
        os.makedirs(self.rec, exist_ok=True)
        return self.fake("recorder", """
in=$(cat)
printf '%%s' "$in" > "%(rec)s/$$.in"
printf '%%s\\n' "$@" > "%(rec)s/$$.args"
printf '%%s' "${HERMES_HOME-<unset>}" > "%(rec)s/$$.home"
case "$in" in
  *'"event": "post_approval_response"'*) echo '%(post)s' ;;
  *) echo '%(answer)s' ;;
esac
""" % {"rec": self.rec, "answer": answer, "post": post_answer})

    def recorded(self):
        """The recorder's calls: (event object, argv, HERMES_HOME) each."""
        calls = []
        for name in sorted(os.listdir(self.rec)):
            if name.endswith(".in"):
                stem = os.path.join(self.rec, name[:-3])
                with open(stem + ".in") as f:
                    event = json.load(f)
                with open(stem + ".args") as f:
                    argv = f.read().split("\n")[:-1]
                with open(stem + ".home") as f:
                    home = f.read()
                calls.append((event, argv, home))
        return calls

    def clear_recorded(self):
        for name in os.listdir(self.rec):
            os.remove(os.path.join(self.rec, name))

    def host(self, settings=None):
        h = hermes_host.Host(self.home, settings or {})
        h.load()
        return h

    def request(self, timeout=10, session_key="sess-1", command="rm -rf /tmp/x", **kw):
        return hermes_host.ApprovalRequest.create(
            command=command, description="delete", pattern_key="delete", pattern_keys=("delete",),
            session_key=session_key, surface="cli", timeout_seconds=timeout, **kw)

    def run_host(self, *args, stdin=None, timeout=30):
        proc = subprocess.run(
            [sys.executable, HOST, "--hermes-home", self.home] + list(args),
            input=stdin, capture_output=True, text=True, timeout=timeout)
        lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        return proc.returncode, lines, proc.stderr

    def assertDecision(self, decision, request, choice):
        self.assertIsInstance(decision, hermes_host.ApprovalDecision)
        self.assertEqual(decision.request_id, request.request_id)
        self.assertEqual(decision.request_digest, request.digest)
        self.assertEqual(decision.choice, choice)


class TestPresent(Base):
    """present(request) called directly, in this process."""

    def test_answers_map_to_choices(self):
        for name, body, want in ANSWERS:
            with self.subTest(name):
                host = self.host({"binary": self.fake(name, body)})
                req = self.request()
                with self.assertLogs(PLUGIN_LOG, level="INFO") as logs:
                    decision = host.transports["approve-tui"](req)
                self.assertDecision(decision, req, want)
                text = "\n".join(logs.output)
                self.assertIn(req.request_id, text)
                self.assertIn("WARNING" if want == "deny" else "INFO", text)
                if name == "deny":
                    self.assertIn("x", logs.output[-1])
                # Through the host too: a plugin deny is a valid decision.
                result = hermes_host.invoke(host.transports["approve-tui"], self.request(), timeout_seconds=10)
                self.assertEqual((result.choice, result.failure), (want, None))

    def test_once_only_when_allowed(self):
        host = self.host({"binary": self.fake("once", """echo '{"choice":"once"}'""")})
        req = dataclasses.replace(self.request(), allowed_choices=("deny",))
        with self.assertLogs(PLUGIN_LOG):
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")

    def test_child_stderr_logged_on_failure(self):
        host = self.host({"binary": self.fake("err", "echo 'database is locked' >&2; exit 3")})
        req = self.request()
        with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")
        self.assertIn("status 3", logs.output[-1])
        self.assertIn("database is locked", logs.output[-1])

    def test_never_raises(self):
        host = self.host({"binary": self.fake("once", """echo '{"choice":"once"}'""")})
        present = host.transports["approve-tui"]

        class Broken(object):
            request_id = "r1"
            digest = "d1"

            def respond(self, choice):
                return hermes_host.ApprovalDecision(self.request_id, self.digest, choice)

        with self.assertLogs(PLUGIN_LOG, level="WARNING"):
            self.assertEqual(present(Broken()).choice, "deny")  # no command, no choices...
        req = dataclasses.replace(self.request(), timeout_seconds="soon")
        with self.assertLogs(PLUGIN_LOG, level="WARNING"):
            self.assertDecision(present(req), req, "deny")

        # A config that raises, no APPROVE_TUI_BIN, nothing on PATH.
        class Ctx(object):
            def __init__(self):
                self.transports, self.hooks = {}, {}

            def register_approval_transport(self, name, fn):
                self.transports[name] = fn

            def register_hook(self, name, fn):
                self.hooks[name] = fn

            def get_config(self, key, default=None):
                raise RuntimeError("config unreadable")

        ctx = Ctx()
        host.modules["approve-tui"].register(ctx)
        os.environ["PATH"] = ""
        req = self.request()
        with self.assertLogs(PLUGIN_LOG, level="WARNING"):
            self.assertDecision(ctx.transports["approve-tui"](req), req, "deny")
        with self.assertLogs(PLUGIN_LOG, level="WARNING"):
            ctx.hooks["post_approval_response"](request_id=req.request_id, choice="deny",
                                                surface="transport:approve-tui")
        ctx.hooks["pre_approval_request"]()  # no kwargs at all: ignored

    def test_binary_setting_not_executable(self):
        # approve-tui on PATH must not be used when the setting is wrong.
        path_dir = os.path.join(self.tmp, "path")
        os.makedirs(path_dir)
        self.fake("approve-tui", """echo '{"choice":"once"}'""", path_dir)
        os.environ["PATH"] = path_dir + os.pathsep + os.environ.get("PATH", "")
        plain = os.path.join(self.tmp, "plain")
        open(plain, "w").close()
        for setting in (os.path.join(self.tmp, "missing"), plain, self.bin):
            with self.subTest(setting):
                host = self.host({"binary": setting})
                req = self.request()
                with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
                    self.assertDecision(host.transports["approve-tui"](req), req, "deny")
                self.assertIn("not an executable file", logs.output[-1])
                self.assertIn("settings.binary", logs.output[-1])

    def test_no_binary_anywhere(self):
        os.environ["PATH"] = ""
        host = self.host()
        req = self.request()
        with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")
        self.assertIn("install approve-tui on Hermes' PATH", logs.output[-1])
        self.assertIn("plugins.entries.approve-tui.settings.binary", logs.output[-1])

    def test_env_bin_and_path(self):
        os.environ["APPROVE_TUI_BIN"] = self.fake("once", """echo '{"choice":"once"}'""")
        host = self.host()
        req = self.request()
        with self.assertLogs(PLUGIN_LOG):
            self.assertDecision(host.transports["approve-tui"](req), req, "once")
        # A setting beats the environment.
        host = self.host({"binary": self.fake("deny", """echo '{"choice":"deny"}'""")})
        with self.assertLogs(PLUGIN_LOG):
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")
        # A broken APPROVE_TUI_BIN does not fall through to PATH either.
        os.environ["APPROVE_TUI_BIN"] = os.path.join(self.tmp, "missing")
        host = self.host()
        with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")
        self.assertIn("APPROVE_TUI_BIN", logs.output[-1])
        # PATH.
        del os.environ["APPROVE_TUI_BIN"]
        path_dir = os.path.join(self.tmp, "path")
        os.makedirs(path_dir)
        self.fake("approve-tui", """echo '{"choice":"once"}'""", path_dir)
        os.environ["PATH"] = path_dir + os.pathsep + os.environ.get("PATH", "")
        with self.assertLogs(PLUGIN_LOG):
            self.assertDecision(host.transports["approve-tui"](req), req, "once")

    def test_what_the_binary_gets(self):
        db = os.path.join(self.tmp, "approvals.db")
        host = self.host({"binary": self.recorder(), "db": db})
        with self.assertLogs(PLUGIN_LOG):
            req, result, created_at, answered_at = host.request(
                "approve-tui", "rm -rf /tmp/x", description="delete", pattern_key="delete",
                pattern_keys=["delete", "recursive"], session_key="sess-42", surface="gateway",
                timeout=30, allow_session=True)
        self.assertEqual((result.choice, result.failure), ("once", None))
        calls = self.recorded()
        self.assertEqual(len(calls), 2)
        present = [c for c in calls if c[0]["event"] == "present"]
        post = [c for c in calls if c[0]["event"] == "post_approval_response"]
        self.assertEqual((len(present), len(post)), (1, 1))
        event, argv, home = present[0]
        self.assertEqual(set(event), PRESENT_KEYS)
        self.assertEqual(event["schema_version"], 1)
        self.assertEqual(event["request_id"], req.request_id)
        self.assertEqual(event["digest"], req.digest)
        self.assertEqual(event["command"], "rm -rf /tmp/x")
        self.assertEqual(event["description"], "delete")
        self.assertEqual(event["pattern_key"], "delete")
        self.assertEqual(event["pattern_keys"], ["delete", "recursive"])
        self.assertEqual(event["surface"], "gateway")
        self.assertEqual(event["timeout_seconds"], 30)
        self.assertEqual(event["allowed_choices"], ["once", "session", "deny"])
        self.assertEqual(event["session_key"], "sess-42")
        self.assertTrue(created_at <= event["presented_at"] <= answered_at)
        self.assertEqual(argv, ["hook", "hermes", "--db", db])
        self.assertEqual(home, self.home)
        event, argv, home = post[0]
        self.assertEqual(event, {"event": "post_approval_response", "request_id": req.request_id,
                                 "choice": "once", "session_key": "sess-42"})
        self.assertEqual(argv, ["hook", "hermes", "--db", db])
        self.assertEqual(home, self.home)

    def test_without_hermes_constants_or_settings(self):
        host = self.host({"binary": self.recorder()})
        sys.modules.pop("hermes_constants", None)  # as outside Hermes: not importable
        os.environ["HERMES_HOME"] = os.path.join(self.tmp, "elsewhere")
        req = self.request()
        with self.assertLogs(PLUGIN_LOG):
            self.assertDecision(host.transports["approve-tui"](req), req, "once")
        (event, argv, home), = self.recorded()
        self.assertNotIn("session_key", event)  # no pre hook: not known
        self.assertEqual(set(event), PRESENT_KEYS - {"session_key"})
        self.assertEqual(argv, ["hook", "hermes"])
        self.assertEqual(home, os.path.join(self.tmp, "elsewhere"))

    def test_post_hook_only_for_its_requests(self):
        host = self.host({"binary": self.recorder()})
        post = host.hooks["post_approval_response"][0][1]
        post(request_id="never-seen", choice="once", surface="transport:other", session_key="s")
        post(request_id="never-seen", choice="once", surface="cli")
        self.assertEqual(self.recorded(), [])
        # Hermes names the transport: recorded, although not presented here
        # (e.g. transport_busy); extra keys are accepted.
        post(request_id="busy-1", choice="transport_busy", surface="transport:approve-tui",
             decided_by="host", something_new=1)
        (event, _, _), = self.recorded()
        self.assertEqual(event, {"event": "post_approval_response", "request_id": "busy-1",
                                 "choice": "transport_busy", "decided_by": "host"})
        # Presented here: recorded whatever the surface says; then forgotten.
        req = self.request()
        with self.assertLogs(PLUGIN_LOG):
            host.transports["approve-tui"](req)
        self.clear_recorded()
        post(request_id=req.request_id, choice="deny", surface="")
        (event, _, _), = self.recorded()
        self.assertEqual(event["choice"], "deny")
        self.clear_recorded()
        post(request_id=req.request_id, choice="deny", surface="")
        self.assertEqual(self.recorded(), [])

    def test_post_hook_failures_logged(self):
        cases = [
            (self.recorder(post_answer='{"recorded":false,"reason":"no such request"}'),
             "no such request"),
            (self.fake("fail", "echo 'store is gone' >&2; exit 2"), "store is gone"),
            (self.fake("junk", "echo junk"), "not JSON"),
        ]
        for binary, want in cases:
            with self.subTest(want):
                host = self.host({"binary": binary})
                post = host.hooks["post_approval_response"][0][1]
                with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
                    post(request_id="r", choice="once", surface="transport:approve-tui")
                self.assertIn(want, logs.output[-1])
                self.assertIn("r", logs.output[-1])

    def test_no_time_left(self):
        host = self.host({"binary": self.recorder()})
        req = self.request(timeout=0.5)
        with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")
        self.assertIn("no time left", logs.output[-1])
        self.assertEqual(self.recorded(), [])

    def test_budget_kills_the_child(self):
        pidfile = os.path.join(self.tmp, "pid")
        host = self.host({"binary": self.fake("sleeper", "echo $$ > '%s'; exec sleep 30" % pidfile)})
        req = self.request(timeout=2)
        start = time.monotonic()
        with self.assertLogs(PLUGIN_LOG, level="WARNING") as logs:
            self.assertDecision(host.transports["approve-tui"](req), req, "deny")
        elapsed = time.monotonic() - start
        self.assertLess(elapsed, 1.9)  # budget: 2 s - 1 s margin
        self.assertGreater(elapsed, 0.8)
        self.assertIn("stopped", logs.output[-1])
        with open(pidfile) as f:
            pid = int(f.read())
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)


class TestHostCLI(Base):
    """hermes_host.py as the Go tests run it."""

    def test_eight_concurrent_requests(self):
        binary = self.fake("by_command", """
in=$(cat)
case "$in" in
  *'"event": "post_approval_response"'*) echo '{"recorded":true}'; exit 0 ;;
esac
sleep 0.5
case "$in" in
  *'"command": "allow-'*) echo '{"choice":"once"}' ;;
  *) echo '{"choice":"deny","reason":"not allowed"}' ;;
esac
""")
        commands = ["allow-%d" % i if i % 2 == 0 else "refuse-%d" % i for i in range(8)]
        args = ["--settings", json.dumps({"binary": binary}), "--timeout", "20"]
        for c in commands:
            args += ["--command", c]
        rc, lines, stderr = self.run_host(*args)
        self.assertEqual(rc, 0, stderr)
        self.assertEqual(sorted(line["command"] for line in lines), sorted(commands))
        for line in lines:
            want = "once" if line["command"].startswith("allow-") else "deny"
            self.assertEqual((line["choice"], line["failure"]), (want, None), line)
            self.assertEqual(commands[line["index"]], line["command"])
            self.assertEqual(line["session_key"], "testhost")
            self.assertIsNone(line["tag"])
        self.assertEqual(len({line["request_id"] for line in lines}), 8)
        # All eight waited at once.
        self.assertLess(max(line["created_at"] for line in lines),
                        min(line["answered_at"] for line in lines))
        self.assertIn("not allowed", stderr)

    def test_ninth_concurrent_request_is_busy(self):
        posts = os.path.join(self.tmp, "posts")
        binary = self.fake("slow", """
in=$(cat)
case "$in" in
  *'"event": "post_approval_response"'*) printf '%%s\\n' "$in" >> '%s'; echo '{"recorded":true}'; exit 0 ;;
esac
sleep 1.5
echo '{"choice":"once"}'
""" % posts)
        args = ["--settings", json.dumps({"binary": binary}), "--timeout", "20"]
        for i in range(9):
            args += ["--command", "cmd-%d" % i]
        rc, lines, stderr = self.run_host(*args)
        self.assertEqual(rc, 0, stderr)
        results = sorted((line["choice"], line["failure"]) for line in lines)
        self.assertEqual(results, [("deny", "busy")] + [("once", None)] * 8)
        self.assertIn("capacity exhausted", stderr)
        with open(posts) as f:
            choices = sorted(json.loads(line)["choice"] for line in f)
        self.assertEqual(choices, ["once"] * 8 + ["transport_busy"])

    def test_stdin_requests_start_as_they_arrive(self):
        binary = self.recorder()
        proc = subprocess.Popen(
            [sys.executable, HOST, "--hermes-home", self.home, "--stdin",
             "--settings", json.dumps({"binary": binary})],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            proc.stdin.write(json.dumps({"command": "first", "tag": "a", "session_key": "gw:1",
                                         "surface": "gateway", "timeout": 7}) + "\n")
            proc.stdin.flush()
            first = json.loads(proc.stdout.readline())  # answered before the next line
            proc.stdin.write(json.dumps({"command": "second", "tag": "b", "allow_permanent": True,
                                         "pattern_keys": ["p1", "p2"], "description": "d"}) + "\n")
            proc.stdin.close()
            second = json.loads(proc.stdout.readline())
            self.assertEqual(proc.wait(timeout=20), 0, proc.stderr.read())
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.stdout.close()
            proc.stderr.close()
        self.assertEqual((first["tag"], first["index"], first["command"], first["choice"], first["session_key"]),
                         ("a", 0, "first", "once", "gw:1"))
        self.assertEqual((second["tag"], second["index"], second["session_key"]), ("b", 1, "testhost"))
        self.assertLessEqual(first["created_at"], first["answered_at"])
        events = {c[0]["command"]: c[0] for c in self.recorded() if c[0]["event"] == "present"}
        self.assertEqual(events["first"]["surface"], "gateway")
        self.assertEqual(events["first"]["timeout_seconds"], 7)
        self.assertEqual(events["first"]["session_key"], "gw:1")
        self.assertEqual(events["second"]["allowed_choices"], ["once", "always", "deny"])
        self.assertEqual(events["second"]["pattern_keys"], ["p1", "p2"])
        self.assertEqual(events["second"]["description"], "d")

    def test_late_answer(self):
        # The plugin stops the child 1 s before Hermes' deadline and denies
        # in time: the host has a deny, not a timeout.
        pidfile = os.path.join(self.tmp, "pid")
        binary = self.fake("sleeper", """
in=$(cat)
case "$in" in *'"event": "present"'*) echo $$ > '%s'; exec sleep 30 ;; esac
echo '{"recorded":true}'
""" % pidfile)
        rc, lines, stderr = self.run_host("--settings", json.dumps({"binary": binary}), "--timeout", "2",
                                          "--command", "sleepy")
        self.assertEqual(rc, 0, stderr)
        (line,) = lines
        self.assertEqual((line["choice"], line["failure"]), ("deny", None))
        self.assertLess(line["answered_at"] - line["created_at"], 2.0)
        self.assertIn("approve-tui was stopped", stderr)
        with open(pidfile) as f:
            pid = int(f.read())
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_host_validates_decisions(self):
        d = os.path.join(self.home, "plugins", "checker")
        os.makedirs(d)
        with open(os.path.join(d, "plugin.yaml"), "w") as f:
            f.write('name: "checker"  # a test plugin\nversion: "0.1"\ndescription: x\n')
        with open(os.path.join(d, "__init__.py"), "w") as f:
            f.write('''
import dataclasses, time

def present(request):
    c = request.command
    if c == "stale-id":
        return dataclasses.replace(request.respond("once"), request_id="0" * 32)
    if c == "stale-digest":
        return dataclasses.replace(request.respond("once"), request_digest="0" * 64)
    if c == "always":
        return request.respond("always")
    if c == "dict":
        return {"request_id": request.request_id, "choice": "once"}
    if c == "raise":
        raise RuntimeError("boom")
    if c == "late":
        time.sleep(2.5)
        return request.respond("once")
    if c == "async":
        async def later():
            return request.respond("once")
        return later()
    return request.respond("once")

def register(ctx):
    ctx.register_approval_transport("checker", present)
''')
        want = {"stale-id": ("deny", "stale"), "stale-digest": ("deny", "stale"),
                "always": ("deny", "invalid"), "dict": ("deny", "invalid"), "raise": ("deny", "error"),
                "late": ("deny", "timeout"), "async": ("once", None), "once": ("once", None)}
        args = ["--enabled", "checker", "--transport", "checker", "--timeout", "2"]
        for c in want:
            args += ["--command", c]
        rc, lines, stderr = self.run_host(*args)
        self.assertEqual(rc, 0, stderr)
        got = {line["command"]: (line["choice"], line["failure"]) for line in lines}
        self.assertEqual(got, want)
        late = [line for line in lines if line["command"] == "late"][0]
        self.assertGreaterEqual(late["answered_at"] - late["created_at"], 1.9)
        # A transport nobody registered.
        rc, lines, stderr = self.run_host("--transport", "nobody", "--command", "x")
        self.assertEqual(rc, 0, stderr)
        self.assertEqual((lines[0]["choice"], lines[0]["failure"]), ("deny", "unavailable"))

    def test_bad_arguments_and_plugins(self):
        rc, _, stderr = self.run_host("--settings", "[1]", "--command", "x")
        self.assertEqual(rc, 2)
        self.assertIn("--settings", stderr)
        rc, _, stderr = self.run_host("--enabled", "absent", "--command", "x")
        self.assertEqual(rc, 2)
        self.assertIn("absent", stderr)
        rc, _, stderr = self.run_host("--surface", "web", "--command", "x")
        self.assertEqual(rc, 2)
        rc, lines, stderr = self.run_host("--stdin", "--transport", "nobody", stdin='{"command": 1}\n')
        self.assertEqual((rc, lines), (2, []))
        for name, body, reason in [
            ("badhook", 'def register(ctx):\n    ctx.register_hook("on_everything", print)\n', "unknown hook"),
            ("badname", 'def register(ctx):\n    ctx.register_approval_transport("Bad Name", print)\n',
             "invalid approval transport name"),
            ("noregister", "x = 1\n", "no register"),
        ]:
            with self.subTest(name):
                d = os.path.join(self.home, "plugins", name)
                os.makedirs(d)
                with open(os.path.join(d, "plugin.yaml"), "w") as f:
                    f.write("name: %s\n" % name)
                with open(os.path.join(d, "__init__.py"), "w") as f:
                    f.write(body)
                rc, _, stderr = self.run_host("--enabled", name, "--command", "x")
                self.assertEqual(rc, 2)
                self.assertIn(reason, stderr)

    def test_request_digest(self):
        req = hermes_host.ApprovalRequest.create(
            command="c", description="d", pattern_key="p", pattern_keys=("p", "q"), session_key="s",
            surface="cli", allow_session=False, allow_permanent=True, timeout_seconds=300)
        canonical = json.dumps({
            "schema_version": 1, "request_id": req.request_id, "command": "c", "description": "d",
            "pattern_key": "p", "pattern_keys": ["p", "q"], "surface": "cli", "timeout_seconds": 300,
            "allowed_choices": ["once", "always", "deny"], "session_key": "s",
        }, sort_keys=True, separators=(",", ":"))
        self.assertEqual(req.digest, hashlib.sha256(canonical.encode("utf-8")).hexdigest())
        self.assertEqual(req.allowed_choices, ("once", "always", "deny"))
        self.assertEqual(req.pattern_keys, ("p", "q"))
        self.assertEqual(len(req.request_id), 32)
        self.assertEqual(req.respond("deny"), hermes_host.ApprovalDecision(req.request_id, req.digest, "deny"))
        with self.assertRaises(dataclasses.FrozenInstanceError):
            req.command = "other"


if __name__ == "__main__":
    unittest.main()
