"""The process side of the code sandbox: run one untrusted Python solution under an audit hook.

Run by `verl.utils.reward_score.sandbox` as `python -I -B sandbox_child.py SOLUTION [FN_NAME ARGS_JSON]`
with the working directory set to a fresh temp dir. Standard library only (it runs isolated, `-I`,
so the project is not importable).

Before the solution runs, this file:
  * asks the kernel to SIGKILL it when its parent dies (PR_SET_PDEATHSIG), so a scorer process
    killed for a timeout leaves no orphan behind;
  * installs an audit hook (PEP 578, cannot be removed) that refuses: any socket, opening a file
    for writing (and remove / rename / mkdir / chmod / ...) outside the working directory,
    starting processes (fork, exec, spawn, system, subprocess) and loading native code with ctypes.

An audit hook guards Python-level calls only; together with the parent's rlimits and (where the
kernel allows) a private network namespace it is a guard against careless or greedy code, not a
boundary against a determined attacker.

Stdin mode (no FN_NAME): the solution runs as `__main__` with the caller's stdin/stdout.
Call mode: the solution is executed, then `FN_NAME(*args)` (a top-level function, or a method of a
top-level `Solution` class) is called; the result is written to stdout as one JSON line after the
marker line `_CALL_RESULT_MARKER`.
"""
import json
import os
import sys

_CALL_RESULT_MARKER = "\x00sandbox-call-result\x00"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PROCESS_EVENTS = {"os.fork", "os.forkpty", "os.posix_spawn", "os.exec", "os.spawn", "os.system",
                   "subprocess.Popen", "pty.spawn", "os.startfile", "os.kill", "os.killpg"}
# event -> indices of its path arguments that must stay inside the working directory
_PATH_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1), "os.link": (0, 1),
                "os.symlink": (1,), "os.chmod": (0,), "os.chown": (0,), "os.truncate": (0,), "os.utime": (0,),
                "os.mkfifo": (0,), "os.mknod": (0,), "shutil.rmtree": (0,), "os.chflags": (0,),
                "os.setxattr": (0,), "os.removexattr": (0,)}


def _die_with_parent() -> None:
    try:
        import ctypes

        ppid = os.getppid()
        ctypes.CDLL(None, use_errno=True).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
        if os.getppid() != ppid:  # the parent died before prctl took effect
            os._exit(137)
    except (OSError, AttributeError):  # not Linux: the parent's timeout still applies
        pass


def _install_guard(root: str) -> None:
    root = os.path.realpath(root)
    realpath, join, getcwd = os.path.realpath, os.path.join, os.getcwd
    busy = []

    def inside(path) -> bool:
        if isinstance(path, int):  # an already open descriptor
            return True
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        full = realpath(join(getcwd(), str(path)))
        return full == root or full.startswith(root + os.sep) or full == "/dev/null"

    def refuse(event: str, detail) -> None:
        raise PermissionError(f"sandbox: {event} is not allowed ({detail!r})")

    def hook(event: str, args) -> None:
        if busy:  # the checks below call os functions that raise events of their own
            return
        busy.append(1)
        try:
            if event.startswith("socket."):
                refuse(event, "no network")
            elif event in _PROCESS_EVENTS:
                refuse(event, "no new processes")
            elif event in ("ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle"):
                refuse(event, "no native code")
            elif event == "open":
                path, mode, flags = args
                writing = (
                    (isinstance(mode, str) and any(c in mode for c in "wax+"))
                    or bool((flags or 0) & _WRITE_FLAGS)
                )
                if writing and not inside(path):
                    refuse("writing", path)
            elif event in _PATH_EVENTS:
                for i in _PATH_EVENTS[event]:
                    if i < len(args) and args[i] is not None and not inside(args[i]):
                        refuse(event, args[i])
        finally:
            busy.pop()

    sys.addaudithook(hook)


def _call(namespace: dict, fn_name: str, args: list):
    fn = namespace.get(fn_name)
    if fn is None and isinstance(namespace.get("Solution"), type):
        fn = getattr(namespace["Solution"](), fn_name, None)
    if not callable(fn):
        raise NameError(f"the solution defines no function {fn_name!r}")
    return fn(*args)


def main(argv: list[str]) -> None:
    solution = argv[1]
    fn_name, args = (argv[2], json.loads(argv[3])) if len(argv) > 3 else (None, None)
    _die_with_parent()
    import io
    import runpy

    _install_guard(os.getcwd())
    if fn_name is None:
        runpy.run_path(solution, run_name="__main__")
        return
    real_stdout, sys.stdout = sys.stdout, io.StringIO()  # the solution's own prints are not the result
    try:
        result = _call(runpy.run_path(solution, run_name="__sandbox__"), fn_name, args)
    finally:
        sys.stdout = real_stdout
    sys.stdout.write(_CALL_RESULT_MARKER + "\n" + json.dumps(result) + "\n")


if __name__ == "__main__":
    main(sys.argv)
