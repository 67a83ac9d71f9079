"""The prime code scorer and its sandbox: right and wrong programs, endless loops, writes outside the
working directory, sockets, memory bombs and new processes are all contained."""
from __future__ import annotations

import json
import os
import socket
import time

import pytest

from verl.config.schema import CodeSandboxConfig
from verl.utils.reward_score import default_compute_score, prime_code
from verl.utils.reward_score.sandbox import network_namespace_available, run_python

ADD_CASES = json.dumps({"inputs": ["1 2\n", "10 -3\n", "0 0\n"], "outputs": ["3\n", "7\n", "0\n"]})
FAST = CodeSandboxConfig(timeout_s=2.0, memory_limit_mb=512)


def answer(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}\n```\nDone."


def test_correct_program_scores_one():
    code = "a, b = map(int, input().split())\nprint(a + b)"
    assert default_compute_score("codecontests", answer(code), ADD_CASES, sandbox=FAST) == 1.0


def test_wrong_answer_scores_zero():
    assert default_compute_score("apps", answer("a, b = map(int, input().split())\nprint(a - b)"), ADD_CASES) == 0.0


def test_one_failing_case_scores_zero():
    # right on the first two cases only: the score is all or nothing
    code = "a, b = map(int, input().split())\nprint(a + b if a else 1)"
    assert prime_code.compute_score(answer(code), ADD_CASES, sandbox=FAST) == 0.0


def test_no_code_block_scores_zero():
    assert prime_code.compute_score("print(3)", ADD_CASES) == 0.0


def test_endless_loop_times_out():
    start = time.perf_counter()
    run = run_python("while True:\n    pass", config=CodeSandboxConfig(timeout_s=1.0))
    assert run.status == "timeout" and run.wall_s < 5
    assert prime_code.compute_score(answer("while True:\n    pass"), ADD_CASES,
                                    sandbox=CodeSandboxConfig(timeout_s=1.0)) == 0.0
    assert time.perf_counter() - start < 15  # the first case's timeout ends the scoring


def test_writing_outside_the_working_directory_is_refused(tmp_path):
    target = tmp_path / "escaped.txt"
    code = (f"try:\n    open({str(target)!r}, 'w').write('x')\n    print('written')\n"
            f"except PermissionError as exc:\n    print('refused', exc)\n"
            "open('inside.txt', 'w').write('ok')\nprint(open('inside.txt').read())")
    run = run_python(code, config=FAST)
    assert run.status == "ok", run.stderr
    assert run.stdout.startswith("refused") and "ok" in run.stdout
    assert not target.exists()
    # os-level writes and removals are refused too
    run = run_python(f"import os\nos.open({str(target)!r}, os.O_WRONLY | os.O_CREAT)", config=FAST)
    assert run.status == "error" and "PermissionError" in run.stderr and not target.exists()
    keep = tmp_path / "keep.txt"
    keep.write_text("mine")
    run = run_python(f"import os\nos.remove({str(keep)!r})", config=FAST)
    assert run.status == "error" and keep.read_text() == "mine"


def test_opening_a_socket_is_refused():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.5)
        port = server.getsockname()[1]
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'hi')"
        run = run_python(code, config=FAST)
        assert run.status == "error" and "PermissionError" in run.stderr
        with pytest.raises(socket.timeout):
            server.accept()  # nothing reached the listener


@pytest.mark.skipif(not network_namespace_available(), reason="unprivileged user namespaces are off here")
def test_network_namespace_has_only_loopback():
    # reading is allowed: the child's own view of the interfaces is a fresh namespace's (lo only)
    run = run_python("print(open('/proc/net/dev').read())", config=FAST)
    interfaces = {line.split(":")[0].strip() for line in run.stdout.splitlines() if ":" in line}
    assert interfaces == {"lo"}, run.stdout


def test_memory_bomb_is_contained():
    run = run_python("x = bytearray(4 * 1024 ** 3)\nprint('allocated')", config=CodeSandboxConfig(memory_limit_mb=256))
    assert run.status == "error" and "MemoryError" in run.stderr and "allocated" not in run.stdout
    code = "x = []\nwhile True:\n    x.append(' ' * 10 ** 6)"
    assert prime_code.compute_score(answer(code), ADD_CASES, sandbox=CodeSandboxConfig(memory_limit_mb=256)) == 0.0


def test_new_processes_are_refused():
    for code in ("import os\nos.system('true')", "import subprocess\nsubprocess.run(['true'])",
                 "import os\nos.fork()"):
        run = run_python(code, config=FAST)
        assert run.status == "error" and "PermissionError" in run.stderr, (code, run.stderr)


def test_call_based_cases():
    cases = {"fn_name": "add", "inputs": [[1, 2], [5, 5]], "outputs": [[3], [10]]}
    code = "def add(a, b):\n    print('debug output is ignored')\n    return a + b"
    assert prime_code.compute_score(answer(code), cases, sandbox=FAST) == 1.0
    method = "class Solution:\n    def add(self, a, b):\n        return a * b"
    assert prime_code.compute_score(answer(method), cases, sandbox=FAST) == 0.0


def test_output_comparison():
    assert prime_code.outputs_match("3 4\n\n", "3  4")
    assert prime_code.outputs_match("0.3333333", "0.33333333")
    assert not prime_code.outputs_match("3 4 5", "3 4")
    assert prime_code.outputs_match("a\nb", ["a", "b"])


@pytest.mark.parametrize("bad", ["not json", json.dumps({"inputs": ["1"]}), json.dumps({"inputs": [], "outputs": []}),
                                 json.dumps({"inputs": ["1"], "outputs": []})])
def test_malformed_cases_are_a_clear_error(bad):
    with pytest.raises(ValueError, match="test cases"):
        prime_code.compute_score(answer("print(1)"), bad)


def test_the_working_directory_is_removed():
    run = run_python("import os\nprint(os.getcwd())", config=FAST)
    assert run.status == "ok" and not os.path.exists(run.stdout.strip())
