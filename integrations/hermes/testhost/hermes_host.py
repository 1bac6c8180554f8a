#!/usr/bin/env python3
"""A stand-in for Hermes' host side of approval transports, for tests.

It loads approval-transport plugins from $HERMES_HOME/plugins/ the way Hermes
does, and puts approval requests to the selected transport the way Hermes'
approval prompt does: build an ApprovalRequest, fire pre_approval_request,
run the transport on a bounded daemon worker (8 at once; a ninth is denied as
"busy") until the request's deadline, validate the decision fail-closed
(late: "timeout", exception: "error", not a decision or a disallowed choice:
"invalid", wrong request id or digest: "stale"), fire post_approval_response.
Hermes' secret redaction and its hardline blocks are not imitated: commands
are handed over as given.

    python3 hermes_host.py --hermes-home DIR [--settings JSON] [--enabled NAME[,NAME]]
        [--transport NAME] [--timeout SECONDS] [--surface cli|gateway]
        [--session-key K] [--allow-session] [--allow-permanent]
        [--description D] [--pattern-key P] [--command CMD]... [--stdin]

Each --command is one request; all run at once, one thread each. --stdin
reads one JSON object per line (keys: command, description, pattern_key,
pattern_keys, session_key, surface, timeout, allow_session,
allow_permanent, tag), starting each request as its line arrives, until
EOF. One JSON line per finished request goes to stdout:

    {"tag", "index", "request_id", "command", "choice", "failure",
     "created_at", "answered_at", "session_key"}

Logs (the plugins' included) go to stderr. Exit 0 when every request was
processed, 2 for bad arguments, a bad --stdin line or a plugin that does not
load.

Standard library only.
"""

import argparse
import asyncio
import hashlib
import importlib.util
import inspect
import json
import logging
import os
import queue
import re
import sys
import threading
import time
import types
import uuid
from dataclasses import dataclass
from typing import Optional, Tuple

logger = logging.getLogger("hermes_host")

MAX_WORKERS = 8
_worker_slots = threading.BoundedSemaphore(MAX_WORKERS)

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")

HOOK_NAMES = frozenset([
    "pre_approval_request", "post_approval_response",
    "pre_tool_call", "post_tool_call", "pre_llm_call", "post_llm_call",
    "on_session_start", "on_session_end",
])


# -- the request and its answer ------------------------------------------------


@dataclass(frozen=True)
class ApprovalDecision:
    request_id: str
    request_digest: str
    choice: str


@dataclass(frozen=True)
class ApprovalRequest:
    schema_version: int
    request_id: str
    digest: str
    command: str
    description: str
    pattern_key: str
    pattern_keys: Tuple[str, ...]
    surface: str
    timeout_seconds: float
    allowed_choices: Tuple[str, ...]

    @classmethod
    def create(cls, command, description, pattern_key, pattern_keys, session_key, surface,
               allow_session=False, allow_permanent=False, timeout_seconds=300):
        choices = ["once"]
        if allow_session:
            choices.append("session")
        if allow_permanent:
            choices.append("always")
        choices.append("deny")
        fields = {
            "schema_version": 1,
            "request_id": uuid.uuid4().hex,
            "command": command,
            "description": description,
            "pattern_key": pattern_key,
            "pattern_keys": list(pattern_keys),
            "surface": surface,
            "timeout_seconds": timeout_seconds,
            "allowed_choices": choices,
        }
        signed = dict(fields)
        signed["session_key"] = session_key
        canonical = json.dumps(signed, sort_keys=True, separators=(",", ":"))
        fields["digest"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        fields["pattern_keys"] = tuple(pattern_keys)
        fields["allowed_choices"] = tuple(choices)
        return cls(**fields)

    def respond(self, choice):
        return ApprovalDecision(self.request_id, self.digest, choice)


@dataclass(frozen=True)
class TransportResult:
    choice: str
    failure: Optional[str] = None


def _deny(failure):
    return TransportResult("deny", failure)


def invoke(present, request, timeout_seconds, poll_interval=1.0):
    """Run present(request) on a bounded daemon worker; wait until the
    deadline; return the validated result (any failure is a deny)."""
    if not _worker_slots.acquire(blocking=False):
        logger.warning("approval transport worker capacity exhausted (request %s)", request.request_id)
        return _deny("busy")
    results = queue.Queue(maxsize=1)
    deadline = time.monotonic() + max(float(timeout_seconds), 0.0)

    def work():
        try:
            value = present(request)
            if inspect.isawaitable(value):
                async def wait_for(v):
                    return await v
                value = asyncio.run(wait_for(value))
            results.put_nowait(("result", value, time.monotonic()))
        except BaseException as exc:
            try:
                results.put_nowait(("error", exc, time.monotonic()))
            except queue.Full:
                pass
        finally:
            _worker_slots.release()

    worker = threading.Thread(target=work, name="approval-transport-" + request.request_id[:8], daemon=True)
    try:
        worker.start()
    except BaseException:
        _worker_slots.release()
        logger.warning("could not start an approval transport worker")
        return _deny("error")
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            logger.warning("approval transport timed out for request %s", request.request_id)
            return _deny("timeout")
        try:
            kind, value, completed_at = results.get(timeout=min(max(poll_interval, 0.001), remaining))
            break
        except queue.Empty:
            continue
    failure = validate(kind, value, completed_at, deadline, request)
    return _deny(failure) if failure else TransportResult(value.choice)


def validate(kind, value, completed_at, deadline, request):
    """The failure code of a worker's result, None when it is a valid
    decision for request."""
    rid = request.request_id
    if completed_at > deadline:
        logger.warning("approval transport timed out for request %s", rid)
        return "timeout"
    if kind == "error":
        logger.warning("approval transport failed for request %s: %r", rid, value)
        return "error"
    if not isinstance(value, ApprovalDecision):
        logger.warning("approval transport returned an invalid decision type %s for request %s",
                       type(value).__name__, rid)
        return "invalid"
    if value.request_id != rid or value.request_digest != request.digest:
        logger.warning("approval transport returned a stale or mismatched decision for request %s", rid)
        return "stale"
    if value.choice not in request.allowed_choices:
        logger.warning("approval transport returned a disallowed choice %r for request %s", value.choice, rid)
        return "invalid"
    return None


# -- plugins ------------------------------------------------------------------


class PluginError(Exception):
    """A plugin that cannot be loaded."""


class PluginContext(object):
    """What a plugin's register(ctx) gets."""

    def __init__(self, host, plugin_id, settings):
        self._host = host
        self._plugin_id = plugin_id
        self._settings = dict(settings or {})

    def register_approval_transport(self, name, present):
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError("invalid approval transport name %r" % (name,))
        if not callable(present):
            raise TypeError("approval transport %r: present is not callable" % name)
        if name in self._host.transports:
            raise ValueError("approval transport %r is already registered" % name)
        self._host.transports[name] = present
        self._host.transport_owner[name] = self._plugin_id

    def register_hook(self, hook_name, callback):
        if hook_name not in HOOK_NAMES:
            raise ValueError("unknown hook %r" % (hook_name,))
        if not callable(callback):
            raise TypeError("hook %r: callback is not callable" % hook_name)
        self._host.hooks.setdefault(hook_name, []).append((self._plugin_id, callback))

    def get_config(self, key, default=None):
        return self._settings.get(key, default)


def manifest_name(path):
    """The top-level name: of a plugin.yaml (a tiny line parser, no YAML)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^name\s*:\s*(.*?)\s*$", line)
            if not m:
                continue
            value = m.group(1)
            if value[:1] in ("'", '"'):
                end = value.find(value[0], 1)
                return value[1:end] if end > 0 else None
            return value.split(" #", 1)[0].strip() or None
    return None


def _install_hermes_constants(hermes_home):
    """Stand in for Hermes' own hermes_constants module."""
    mod = types.ModuleType("hermes_constants")
    mod.get_hermes_home = lambda: hermes_home
    sys.modules["hermes_constants"] = mod


class Host(object):
    """One Hermes profile: its plugins, their transports and hooks."""

    def __init__(self, hermes_home, settings=None, enabled=("approve-tui",)):
        self.hermes_home = os.path.abspath(hermes_home)
        self.settings = dict(settings or {})
        self.enabled = list(enabled)
        self.transports = {}
        self.transport_owner = {}
        self.hooks = {}
        self.modules = {}

    def load(self):
        """Load every enabled plugin from $HERMES_HOME/plugins/; PluginError
        when one is missing or fails."""
        _install_hermes_constants(self.hermes_home)
        root = os.path.join(self.hermes_home, "plugins")
        found = {}
        if os.path.isdir(root):
            for entry in sorted(os.listdir(root)):
                d = os.path.join(root, entry)
                yaml_path = os.path.join(d, "plugin.yaml")
                if os.path.isdir(d) and os.path.isfile(yaml_path):
                    try:
                        name = manifest_name(yaml_path)
                    except (OSError, UnicodeDecodeError) as exc:
                        logger.warning("skipping plugin %s: %s", d, exc)
                        continue
                    if name:
                        found.setdefault(name, d)
        for name in self.enabled:
            if name not in found:
                raise PluginError("plugin %r is enabled but not found under %s" % (name, root))
            self._load_one(name, found[name])

    def _load_one(self, name, directory):
        init = os.path.join(directory, "__init__.py")
        if not os.path.isfile(init):
            raise PluginError("plugin %r: %s is missing" % (name, init))
        if "hermes_plugins" not in sys.modules:
            parent = types.ModuleType("hermes_plugins")
            parent.__path__ = []
            sys.modules["hermes_plugins"] = parent
        module_name = "hermes_plugins." + re.sub(r"[^A-Za-z0-9_]", "_", name)
        try:
            spec = importlib.util.spec_from_file_location(
                module_name, init, submodule_search_locations=[directory])
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
            register = getattr(module, "register", None)
            if not callable(register):
                raise PluginError("plugin %r has no register(ctx)" % name)
            register(PluginContext(self, name, self.settings))
        except PluginError:
            raise
        except Exception as exc:
            sys.modules.pop(module_name, None)
            raise PluginError("plugin %r failed to load: %r" % (name, exc))
        self.modules[name] = module
        logger.info("loaded plugin %s from %s", name, directory)

    def fire(self, hook_name, **kwargs):
        for plugin_id, callback in list(self.hooks.get(hook_name, [])):
            try:
                callback(**kwargs)
            except Exception:
                logger.warning("hook %s of plugin %s failed", hook_name, plugin_id, exc_info=True)

    def request(self, transport, command, description="dangerous command", pattern_key=None,
                pattern_keys=None, session_key="", surface="cli", timeout=300.0,
                allow_session=False, allow_permanent=False):
        """Put one approval request to transport, as Hermes does. Returns
        (request, result, created_at, answered_at)."""
        if pattern_key is None:
            pattern_key = description
        timeout = float(timeout)
        if timeout.is_integer():
            timeout = int(timeout)  # as Hermes' approvals.timeout from YAML: 300, not 300.0
        if pattern_keys is None:
            pattern_keys = [pattern_key] if pattern_key else []
        created_at = time.time()
        req = ApprovalRequest.create(
            command=command, description=description, pattern_key=pattern_key,
            pattern_keys=tuple(pattern_keys), session_key=session_key, surface=surface,
            allow_session=allow_session, allow_permanent=allow_permanent, timeout_seconds=timeout)
        hook_kwargs = dict(
            command=req.command, description=req.description, pattern_key=req.pattern_key,
            pattern_keys=req.pattern_keys, session_key=session_key, surface="transport:" + transport,
            request_id=req.request_id, request_digest=req.digest)
        self.fire("pre_approval_request", **hook_kwargs)
        present = self.transports.get(transport)
        if present is None:
            logger.warning("approval transport %r is not registered: request %s denied",
                           transport, req.request_id)
            result = _deny("unavailable")
        else:
            result = invoke(present, req, timeout_seconds=timeout)
        answered_at = time.time()
        choice = result.choice if result.failure is None else "transport_" + result.failure
        self.fire("post_approval_response", choice=choice, **hook_kwargs)
        return req, result, created_at, answered_at


# -- the command line ---------------------------------------------------------


def _parser():
    p = argparse.ArgumentParser(description="A stand-in for Hermes' approval-transport host.")
    p.add_argument("--hermes-home", required=True)
    p.add_argument("--settings", default="{}", help="the plugins' settings, a JSON object")
    p.add_argument("--enabled", default="approve-tui", help="plugins to load, comma-separated")
    p.add_argument("--transport", default="approve-tui")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--surface", choices=["cli", "gateway"], default="cli")
    p.add_argument("--session-key", default="testhost")
    p.add_argument("--allow-session", action="store_true")
    p.add_argument("--allow-permanent", action="store_true")
    p.add_argument("--description", default="dangerous command")
    p.add_argument("--pattern-key", default=None)
    p.add_argument("--command", action="append", default=[])
    p.add_argument("--stdin", action="store_true", help="read requests, one JSON object a line")
    return p


_SPEC_KEYS = frozenset(["command", "description", "pattern_key", "pattern_keys", "session_key",
                        "surface", "timeout", "allow_session", "allow_permanent", "tag"])


def _spec_from_line(line, args):
    obj = json.loads(line)
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    unknown = set(obj) - _SPEC_KEYS
    if unknown:
        raise ValueError("unknown keys %s" % sorted(unknown))
    if not isinstance(obj.get("command"), str):
        raise ValueError("command must be a string")
    spec = _default_spec(obj["command"], args)
    for key in ("description", "pattern_key", "session_key", "surface"):
        if key in obj:
            if not isinstance(obj[key], str):
                raise ValueError("%s must be a string" % key)
            spec[key] = obj[key]
    if "description" in obj and "pattern_key" not in obj and args.pattern_key is None:
        spec["pattern_key"] = obj["description"]
    if "pattern_keys" in obj:
        keys = obj["pattern_keys"]
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ValueError("pattern_keys must be a list of strings")
        spec["pattern_keys"] = keys
    if "timeout" in obj:
        if isinstance(obj["timeout"], bool) or not isinstance(obj["timeout"], (int, float)):
            raise ValueError("timeout must be a number")
        spec["timeout"] = float(obj["timeout"])
    for key in ("allow_session", "allow_permanent"):
        if key in obj:
            spec[key] = bool(obj[key])
    return spec, obj.get("tag")


def _default_spec(command, args):
    return dict(command=command, description=args.description, pattern_key=args.pattern_key,
                session_key=args.session_key, surface=args.surface, timeout=args.timeout,
                allow_session=args.allow_session, allow_permanent=args.allow_permanent)


def main(argv=None):
    args = _parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(levelname)s %(name)s %(message)s")
    try:
        settings = json.loads(args.settings)
        if not isinstance(settings, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        print("hermes_host: --settings: %s" % exc, file=sys.stderr)
        return 2
    if not args.command and not args.stdin:
        print("hermes_host: no requests: give --command or --stdin", file=sys.stderr)
        return 2
    enabled = [n.strip() for n in args.enabled.split(",") if n.strip()]
    host = Host(args.hermes_home, settings, enabled)
    try:
        host.load()
    except PluginError as exc:
        print("hermes_host: %s" % exc, file=sys.stderr)
        return 2

    out_lock = threading.Lock()
    threads = []

    def run(index, spec, tag):
        try:
            req, result, created_at, answered_at = host.request(args.transport, **spec)
            line = {"tag": tag, "index": index, "request_id": req.request_id, "command": req.command,
                    "choice": result.choice, "failure": result.failure, "created_at": created_at,
                    "answered_at": answered_at, "session_key": spec["session_key"]}
        except Exception as exc:  # a host bug: still one line per request
            logger.error("request %d failed in the host: %r", index, exc)
            line = {"tag": tag, "index": index, "request_id": None, "command": spec["command"],
                    "choice": "deny", "failure": "host_error", "created_at": None,
                    "answered_at": time.time(), "session_key": spec["session_key"]}
        text = json.dumps(line)
        with out_lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def start(index, spec, tag):
        t = threading.Thread(target=run, args=(index, spec, tag), name="request-%d" % index)
        t.start()
        threads.append(t)

    index = 0
    for command in args.command:
        start(index, _default_spec(command, args), None)
        index += 1
    bad = False
    if args.stdin:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                spec, tag = _spec_from_line(line, args)
            except ValueError as exc:
                print("hermes_host: bad request line %r: %s" % (line.strip()[:200], exc), file=sys.stderr)
                bad = True
                continue
            start(index, spec, tag)
            index += 1
    for t in threads:
        t.join()
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
