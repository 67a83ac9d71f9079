"""Run untrusted Python (a model's code answer) in a limited subprocess.

Owns the process side of code scoring: a fresh temp working directory per run, resource limits
set before exec (`RLIMIT_AS` memory, `RLIMIT_CPU`, `RLIMIT_FSIZE` file/output size, no core
dumps), a wall-clock timeout that kills the whole process group, a clean environment, and no
network. It does not judge outputs (`prime_code` does).

Layers, from the outside in:
  * network: a private network namespace (`unshare -rn`, only loopback, which is down) when the
    kernel allows unprivileged user namespaces (probed once, `network_namespace_available()`), and
    always the child's audit hook refusing every socket;
  * files: the working directory is a temp dir removed afterwards; the audit hook refuses opening
    for writing (and remove/rename/mkdir/chmod/...) anywhere outside it;
  * processes: the audit hook refuses fork/exec/spawn/subprocess, and the child is SIGKILLed when
    its parent dies (so a scorer killed for a timeout leaves no orphan);
  * resources: rlimits as above; `timeout_s` of wall time.
See `sandbox_child.py` for the hook. This guards against careless or greedy code, not against a
determined attacker (C extensions are not confined by an audit hook); run untrusted code at scale
in a container as well.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from verl.config.schema import CodeSandboxConfig
from verl.utils.reward_score import sandbox_child

__all__ = ["SandboxResult", "run_python", "network_namespace_available"]

_CHILD = os.path.abspath(sandbox_child.__file__)
_MB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class SandboxResult:
    """Outcome of one sandboxed run.

    Attributes:
        status: "ok" (exit 0), "error" (non-zero exit: exception, refused operation, memory) or
            "timeout" (killed after `timeout_s`).
        stdout, stderr: captured text (decoded as UTF-8, invalid bytes replaced).
        returncode: the exit status (negative: killed by that signal).
        wall_s: seconds from start to exit.
        call_result: call mode only: the JSON-decoded return value (None otherwise or on failure).
    """

    status: str
    stdout: str
    stderr: str
    returncode: int
    wall_s: float
    call_result: object = None


@functools.lru_cache(maxsize=1)
def network_namespace_available() -> bool:
    """Whether `unshare -rn` can give a child its own, empty network namespace here."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        return subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _limits(config: CodeSandboxConfig):
    """preexec_fn: rlimits for the child (runs after fork, before exec)."""
    memory = config.memory_limit_mb * _MB
    cpu = int(math.ceil(config.timeout_s)) + 1
    fsize = config.max_output_mb * _MB

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    return apply


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_python(code: str, stdin: str = "", config: CodeSandboxConfig | None = None,
               call: tuple[str, list] | None = None) -> SandboxResult:
    """Run `code` as a Python program in a fresh temp directory under the sandbox.

    Args:
        code: the program text.
        stdin: text fed to its standard input (stdin mode).
        config: limits (`reward_model.code_sandbox`); None: the config's defaults.
        call: (fn_name, args): instead of running as `__main__`, call `fn_name(*args)` (a top-level
            function or a method of a `Solution` class) and return its JSON value as `call_result`.

    Returns:
        A `SandboxResult`; never raises for anything the code does.
    """
    config = config or CodeSandboxConfig()
    workdir = tempfile.mkdtemp(prefix="verl-sandbox-")
    try:
        with open(os.path.join(workdir, "solution.py"), "w", encoding="utf-8") as fh:
            fh.write(code)
        argv = [sys.executable, "-I", "-B", _CHILD, "solution.py"]
        if call is not None:
            argv += [call[0], json.dumps(list(call[1]))]
        if network_namespace_available():
            argv = [shutil.which("unshare"), "-rn", *argv]
        env = {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, preexec_fn=_limits(config), start_new_session=True)
        try:
            out, err = proc.communicate(stdin.encode("utf-8"), timeout=config.timeout_s)
            status = "ok" if proc.returncode == 0 else "error"
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            status = "timeout"
        finally:
            _kill_group(proc)  # nothing of the run may outlive it
        wall_s = time.perf_counter() - start
        stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        result = None
        if call is not None and status == "ok":
            stdout, _, tail = stdout.partition(sandbox_child._CALL_RESULT_MARKER + "\n")
            try:
                result = json.loads(tail)
            except ValueError:
                status = "error"
        return SandboxResult(status, stdout, stderr, proc.returncode, wall_s, result)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
