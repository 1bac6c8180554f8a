"""approve-tui: a Hermes approval transport.

Every dangerous command Hermes asks a human about waits in the approve-tui
console, where a human approves it once or denies it. This plugin decides
nothing: it hands each request to `approve-tui hook hermes` (one JSON object
on stdin) and relays the one-line JSON answer. Only an explicit "once" from
approve-tui approves; anything else (deny, "session" or "always", a crash, a
timeout, no binary, garbage) is deny.

Enable it in $HERMES_HOME/config.yaml:

    plugins:
      enabled: [approve-tui]
    security:
      approval:
        transport: approve-tui

Settings (optional), under plugins.entries.approve-tui.settings:

    binary: /path/to/approve-tui   # default: $APPROVE_TUI_BIN, else approve-tui on PATH
    db: /path/to/approvals.db      # passed as --db; default: approve-tui's own
                                   # ($APPROVE_TUI_DB, else $HERMES_HOME/state.db)

Standard library only; Python 3.9+.
"""

import json
import logging
import os
import shutil
import subprocess
import threading
import time
from collections import OrderedDict

logger = logging.getLogger(__name__)

TRANSPORT = "approve-tui"
SURFACE = "transport:" + TRANSPORT

_MAX_OUTPUT = 1 << 20  # stdout bytes kept; more is a failure
_MAX_STDERR = 2000  # stderr characters quoted in the log
_POST_TIMEOUT = 5.0  # seconds for the post_approval_response record
_SAFETY_MARGIN = 1.0  # seconds the child's budget ends before Hermes' deadline
_MEMORY_SECONDS = 3600.0
_MEMORY_ENTRIES = 1000


class _Memory(object):
    """A thread-safe map that forgets entries after an hour, and the oldest
    past a thousand."""

    def __init__(self):
        self._lock = threading.Lock()
        self._items = OrderedDict()  # key -> (monotonic time, value)

    def put(self, key, value):
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = (time.monotonic(), value)
            self._prune()

    def get(self, key, default=None):
        with self._lock:
            self._prune()
            item = self._items.get(key)
            return default if item is None else item[1]

    def pop(self, key, default=None):
        with self._lock:
            item = self._items.pop(key, None)
            return default if item is None else item[1]

    def _prune(self):
        cutoff = time.monotonic() - _MEMORY_SECONDS
        while self._items:
            key, (stamp, _) = next(iter(self._items.items()))
            if stamp >= cutoff and len(self._items) <= _MEMORY_ENTRIES:
                break
            del self._items[key]


class _Failure(Exception):
    """A plugin-side reason to deny; its message goes to the log."""


def _head(data, limit=_MAX_STDERR):
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "..."


def _run(argv, payload, env, timeout):
    """Run argv with payload on stdin for at most timeout seconds; kill it
    past that.

    Returns (returncode, stdout, stdout overflowed, stderr, timed out).
    stdout keeps at most _MAX_OUTPUT bytes and stderr a few KiB; the rest is
    read and dropped, so the child never blocks on a full pipe.
    """
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            close_fds=True, env=env,
        )
    except OSError as exc:
        raise _Failure("could not run %s: %s" % (argv[0], exc))
    out, err, overflow = [], [], [False]
    try:
        threads = [
            threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True),
            threading.Thread(target=_drain, args=(proc.stdout, out, _MAX_OUTPUT, overflow), daemon=True),
            threading.Thread(target=_drain, args=(proc.stderr, err, 4 * _MAX_STDERR, None), daemon=True),
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + timeout
        timed_out = False
        try:
            proc.wait(timeout=max(timeout, 0.0))
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            proc.wait()
        # A grandchild may hold the pipes open: wait for them only a little.
        for t in threads[1:]:
            t.join(max(deadline - time.monotonic(), 0.0) + 0.2)
        return proc.returncode, b"".join(out), overflow[0], b"".join(err), timed_out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _feed(stream, payload):
    try:
        stream.write(payload)
    except (OSError, ValueError):
        pass  # the child did not read its stdin: its answer says why
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _drain(stream, chunks, limit, overflow):
    kept = 0
    try:
        while True:
            chunk = stream.read1(65536)
            if not chunk:
                return
            room = limit - kept
            if room > 0:
                chunks.append(chunk[:room])
                kept += min(room, len(chunk))
            if len(chunk) > room and overflow is not None:
                overflow[0] = True
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except (OSError, ValueError):
            pass


def _exit_text(code):
    if code is not None and code < 0:
        return "was killed by signal %d" % -code
    return "exited with status %s" % code


def _parse_object(stdout):
    """The last non-empty stdout line as a JSON object (the post answer)."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise _Failure("approve-tui's answer is not valid UTF-8")
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if not lines:
        raise _Failure("approve-tui gave no answer")
    try:
        answer = json.loads(lines[-1])
    except ValueError:
        raise _Failure("approve-tui's answer is not JSON: %r" % lines[-1][:200])
    if not isinstance(answer, dict):
        raise _Failure("approve-tui's answer is not a JSON object: %r" % lines[-1][:200])
    return answer


def _answer(stdout):
    """The child's answer: the last non-empty stdout line, a JSON object with
    a string "choice"."""
    answer = _parse_object(stdout)
    if not isinstance(answer.get("choice"), str):
        raise _Failure("approve-tui's answer has no string choice: %.200r" % (answer,))
    return answer


def _reason_of(stdout):
    """The child's "reason", quoted for the log, when its output has one."""
    try:
        reason = _parse_object(stdout).get("reason")
    except Exception:
        return ""
    return " (%s)" % reason if isinstance(reason, str) and reason else ""


class _Plugin(object):
    def __init__(self, ctx):
        self._ctx = ctx
        self._sessions = _Memory()  # request_id -> session_key (pre hook)
        self._presented = _Memory()  # request_id -> True (present)

    # -- settings, read on each call: the config may change ---------------

    def _setting(self, key):
        try:
            value = self._ctx.get_config(key)
        except Exception:
            logger.warning("approve-tui: could not read setting %s", key, exc_info=True)
            return None
        if value is None:
            return None
        value = str(value).strip()
        return value or None

    def _binary(self):
        configured = self._setting("binary")
        source = "plugins.entries.approve-tui.settings.binary"
        if configured is None:
            configured = os.environ.get("APPROVE_TUI_BIN", "").strip() or None
            source = "APPROVE_TUI_BIN"
        if configured is not None:
            path = os.path.expanduser(configured)
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise _Failure("%s is %r, which is not an executable file" % (source, configured))
            return path
        found = shutil.which("approve-tui")
        if not found:
            raise _Failure(
                "approve-tui not found: install approve-tui on Hermes' PATH, "
                "or set plugins.entries.approve-tui.settings.binary in $HERMES_HOME/config.yaml"
            )
        return found

    def _argv(self):
        argv = [self._binary(), "hook", "hermes"]
        db = self._setting("db")
        if db is not None:
            argv += ["--db", os.path.expanduser(db)]
        return argv

    @staticmethod
    def _env():
        env = dict(os.environ)
        try:
            from hermes_constants import get_hermes_home
            env["HERMES_HOME"] = str(get_hermes_home())
        except Exception:
            pass  # outside Hermes: the environment as it is
        return env

    # -- hooks ---------------------------------------------------------------

    def pre_approval_request(self, **kwargs):
        try:
            request_id = kwargs.get("request_id")
            session_key = kwargs.get("session_key")
            if isinstance(request_id, str) and request_id and isinstance(session_key, str) and session_key:
                self._sessions.put(request_id, session_key)
        except Exception:
            logger.warning("approve-tui: pre_approval_request failed", exc_info=True)

    def post_approval_response(self, **kwargs):
        request_id = kwargs.get("request_id")
        try:
            if not isinstance(request_id, str) or not request_id:
                return
            presented = self._presented.pop(request_id, False)
            if not presented and kwargs.get("surface") != SURFACE:
                return
            event = {"event": "post_approval_response", "request_id": request_id,
                     "choice": str(kwargs.get("choice") or "")}
            if kwargs.get("decided_by") is not None:
                event["decided_by"] = str(kwargs["decided_by"])
            session_key = kwargs.get("session_key") or self._sessions.get(request_id)
            if session_key:
                event["session_key"] = str(session_key)
            code, stdout, overflow, stderr, timed_out = _run(
                self._argv(), json.dumps(event).encode("utf-8"), self._env(), _POST_TIMEOUT)
            if timed_out:
                raise _Failure("approve-tui hook hermes took more than %gs" % _POST_TIMEOUT)
            if code != 0:
                raise _Failure("approve-tui hook hermes %s: %s" % (_exit_text(code), _head(stderr)))
            if overflow:
                raise _Failure("approve-tui's answer exceeds %d bytes" % _MAX_OUTPUT)
            answer = _parse_object(stdout)
            if answer.get("recorded") is False:
                logger.warning("approve-tui: request %s: response not recorded: %s",
                               request_id, answer.get("reason") or "no reason given")
        except _Failure as exc:
            logger.warning("approve-tui: request %s: could not record the response: %s", request_id, exc)
        except Exception as exc:
            logger.warning("approve-tui: request %s: could not record the response: %r", request_id, exc)
        finally:
            try:
                if isinstance(request_id, str):
                    self._sessions.pop(request_id)
            except Exception:
                pass

    # -- the transport -----------------------------------------------------

    def present(self, request):
        presented_at = time.time()
        started = time.monotonic()
        request_id = getattr(request, "request_id", "?")
        try:
            return self._present(request, request_id, presented_at, started)
        except BaseException as exc:  # never raise into Hermes: deny
            try:
                logger.warning("approve-tui: request %s denied: %r", request_id, exc)
            except BaseException:
                pass
            return request.respond("deny")

    def _present(self, request, request_id, presented_at, started):
        allowed = [str(c) for c in request.allowed_choices]
        event = {
            "event": "present",
            "schema_version": request.schema_version,
            "request_id": request.request_id,
            "digest": request.digest,
            "command": request.command,
            "description": request.description,
            "pattern_key": request.pattern_key,
            "pattern_keys": list(request.pattern_keys),
            "surface": request.surface,
            "timeout_seconds": request.timeout_seconds,
            "allowed_choices": allowed,
            "presented_at": presented_at,
        }
        session_key = self._sessions.get(request.request_id)
        if session_key:
            event["session_key"] = session_key
        self._presented.put(request.request_id, True)
        stderr = b""
        try:
            argv = self._argv()
            budget = float(request.timeout_seconds) - (time.monotonic() - started) - _SAFETY_MARGIN
            if budget <= 0:
                raise _Failure("no time left before Hermes' deadline (timeout %ss)" % request.timeout_seconds)
            code, stdout, overflow, stderr, timed_out = _run(
                argv, json.dumps(event).encode("utf-8"), self._env(), budget)
            if timed_out:
                raise _Failure("no answer within %.1fs: approve-tui was stopped" % budget)
            if code != 0:
                raise _Failure("approve-tui hook hermes %s%s" % (_exit_text(code), _reason_of(stdout)))
            if overflow:
                raise _Failure("approve-tui's answer exceeds %d bytes" % _MAX_OUTPUT)
            answer = _answer(stdout)
        except _Failure as exc:
            detail = _head(stderr)
            logger.warning("approve-tui: request %s denied: %s%s", request_id, exc,
                           ("; stderr: " + detail) if detail else "")
            return request.respond("deny")
        choice = answer["choice"]
        reason = answer.get("reason")
        reason = reason if isinstance(reason, str) and reason else None
        if choice == "once" and "once" in allowed:
            logger.info("approve-tui: request %s approved once%s", request_id,
                        (": " + reason) if reason else "")
            return request.respond("once")
        if choice == "deny":
            why = reason or "denied in approve-tui"
        elif choice in ("session", "always"):
            why = "approve-tui answered %r; this plugin grants only once" % choice
        else:
            why = "approve-tui answered %r, not one of %s" % (choice, allowed)
        if reason and choice != "deny":
            why += " (%s)" % reason
        logger.warning("approve-tui: request %s denied: %s", request_id, why)
        return request.respond("deny")


def register(ctx):
    """Hermes' entry point: register the transport and its two hooks."""
    plugin = _Plugin(ctx)
    ctx.register_approval_transport(TRANSPORT, plugin.present)
    ctx.register_hook("pre_approval_request", plugin.pre_approval_request)
    ctx.register_hook("post_approval_response", plugin.post_approval_response)
