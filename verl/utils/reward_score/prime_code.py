"""PRIME's code score: run the answer's Python program against test cases (codecontests, apps,
codeforces, taco).

Owns extracting the program (the last fenced code block of the response), reading the test cases
(`{"inputs": [...], "outputs": [...]}` as JSON text or a dict, optionally `"fn_name"` for
call-based problems) and comparing outputs. Running the program is `sandbox.run_python`'s job:
every case runs in its own fresh sandboxed process. The score is 1.0 only when every case passes
(verl's `continuous` fraction is not offered), else 0.0; cases stop at the first failure.
"""
from __future__ import annotations

import json
import math
import re

from verl.config.schema import CodeSandboxConfig
from verl.utils.reward_score.sandbox import run_python

__all__ = ["DATA_SOURCES", "extract_code", "load_test_cases", "outputs_match", "compute_score"]

DATA_SOURCES = ("codecontests", "apps", "codeforces", "taco")

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.DOTALL)
_FLOAT_TOL = 1e-6


def extract_code(solution_str: str) -> str | None:
    """The last fenced code block of `solution_str` (```python, ```py or a bare ```), or None."""
    blocks = [(lang.lower(), body) for lang, body in _FENCE.findall(solution_str)]
    python = [body for lang, body in blocks if lang in ("python", "python3", "py", "")]
    return python[-1] if python else None


def load_test_cases(ground_truth) -> dict:
    """Parse the test cases: {"inputs": [...], "outputs": [...], "fn_name"?: str}.

    Raises:
        ValueError: not JSON, not a mapping, or inputs/outputs missing, empty or of different lengths.
    """
    cases = ground_truth
    if isinstance(cases, (str, bytes)):
        try:
            cases = json.loads(cases)
        except ValueError as exc:
            raise ValueError(f"code test cases are not valid JSON: {str(ground_truth)[:80]!r}") from exc
    if not isinstance(cases, dict) or not isinstance(cases.get("inputs"), list) or \
            not isinstance(cases.get("outputs"), list):
        raise ValueError('code test cases must be {"inputs": [...], "outputs": [...]}, '
                         f"got {str(ground_truth)[:80]!r}")
    if not cases["inputs"]:
        raise ValueError("code test cases are empty; a program cannot be judged without a case")
    if len(cases["inputs"]) != len(cases["outputs"]):
        raise ValueError(f"code test cases have {len(cases['inputs'])} inputs but {len(cases['outputs'])} outputs")
    return cases


def _tokens(text: str) -> list[list[str]]:
    lines = [line.split() for line in str(text).strip().splitlines()]
    return [line for line in lines if line]


def _token_equal(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    return math.isclose(x, y, rel_tol=_FLOAT_TOL, abs_tol=_FLOAT_TOL)


def outputs_match(actual: str, expected) -> bool:
    """Compare program output with the expected text, line by line and token by token (whitespace
    and blank lines ignored; numbers equal within 1e-6). A list of expected lines is joined."""
    if isinstance(expected, list):
        expected = "\n".join(str(x) for x in expected)
    got, want = _tokens(actual), _tokens(expected)
    return len(got) == len(want) and all(
        len(g) == len(w) and all(_token_equal(a, b) for a, b in zip(g, w, strict=True))
        for g, w in zip(got, want, strict=True)
    )


def _call_matches(result, expected) -> bool:
    # APPS wraps a call's expected return value in a one-element list
    return result == expected or (isinstance(expected, list) and len(expected) == 1 and result == expected[0])


def compute_score(solution_str: str, ground_truth, sandbox: CodeSandboxConfig | None = None) -> float:
    """1.0 when the response's program passes every test case, else 0.0.

    Args:
        solution_str: the decoded model response; its last fenced code block is the program.
        ground_truth: the test cases (see `load_test_cases`).
        sandbox: limits (`reward_model.code_sandbox`); None: the config's defaults.

    Raises:
        ValueError: malformed test cases (a data error, not a wrong answer).
    """
    cases = load_test_cases(ground_truth)
    code = extract_code(solution_str)
    if code is None:
        return 0.0
    fn_name = cases.get("fn_name")
    for case_in, case_out in zip(cases["inputs"], cases["outputs"], strict=True):
        if fn_name:
            args = case_in if isinstance(case_in, list) else [case_in]
            run = run_python(code, config=sandbox, call=(fn_name, args))
            passed = run.status == "ok" and _call_matches(run.call_result, case_out)
        else:
            stdin = "\n".join(map(str, case_in)) if isinstance(case_in, list) else str(case_in)
            run = run_python(code, stdin=stdin, config=sandbox)
            passed = run.status == "ok" and outputs_match(run.stdout, case_out)
        if not passed:
            return 0.0
    return 1.0
