"""PRIME's math score (NuminaMath sources): the last \\boxed{} answer, equal to the ground truth
as a string after MATH normalisation or symbolically (sympy).

Owns the LaTeX -> sympy translation of short answers (fractions, roots, powers, pi, infinity,
common functions, implicit products) and the symbolic comparison: `simplify(a - b) == 0`, or a
numeric difference within 1e-8 (relative) for numbers. Tuples and intervals compare element by
element (brackets must agree). Answer extraction and the string normalisation are
`verl.utils.reward_score.math`'s.

The translated text is checked against a whitelist (digits, operators, brackets, a few function
names, single-letter variables) before sympy parses it, so model output is never evaluated as
arbitrary Python.
"""
from __future__ import annotations

import re

from verl.utils.reward_score import math as math_score

__all__ = ["DATA_SOURCES", "latex_to_sympy", "is_equiv", "compute_score"]

DATA_SOURCES = ("numina_aops_forum", "numina_synthetic_math", "numina_amc_aime", "numina_synthetic_amc",
                "numina_cn_k12", "numina_olympiads")

_MAX_LEN = 200   # longer answers are compared as strings only (simplify on long input is slow)
_REL_TOL = 1e-8
_FUNCS = ("sqrt", "log", "exp", "sin", "cos", "tan", "pi", "oo")
_SAFE = re.compile(r"^[0-9A-Za-z+\-*/().,\s]*$")
_COMMANDS = {"\\cdot": "*", "\\times": "*", "\\div": "/", "\\pi": " pi ", "\\infty": " oo ", "\\ln": " log ",
             "\\log": " log ", "\\exp": " exp ", "\\sin": " sin ", "\\cos": " cos ", "\\tan": " tan "}


def _braced(s: str, start: int) -> tuple[str, int]:
    """The content of the brace group opening at s[start] and the index after it."""
    if start >= len(s) or s[start] != "{":
        # \frac12 style: a single character argument
        if start >= len(s):
            raise ValueError("missing argument")
        return s[start], start + 1
    depth = 0
    for i in range(start, len(s)):
        depth += {"{": 1, "}": -1}.get(s[i], 0)
        if depth == 0:
            return s[start + 1:i], i + 1
    raise ValueError("unbalanced braces")


def _expand(s: str) -> str:
    """Rewrite \\frac and \\sqrt (nested) into parenthesised infix text."""
    out, i = [], 0
    while i < len(s):
        if s.startswith("\\frac", i):
            num, j = _braced(s, i + 5)
            den, i = _braced(s, j)
            out.append(f"(({_expand(num)})/({_expand(den)}))")
        elif s.startswith("\\root", i):  # \sqrt[n]{a}, renamed before normalisation (see latex_to_sympy)
            root, j = _braced(s, i + 5)
            arg, i = _braced(s, j)
            out.append(f"(({_expand(arg)})**(1/({_expand(root)})))")
        elif s.startswith("\\sqrt", i):
            arg, i = _braced(s, i + 5)
            out.append(f"sqrt({_expand(arg)})")
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def latex_to_sympy(answer: str):
    """A sympy expression for a short LaTeX answer, or None when it is not one we can read."""
    import sympy
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    # MATH's normaliser would rewrite "\sqrt[3]{x}" as "\sqrt{[}3]{x}"; keep the index as "\root{3}{x}"
    s = math_score.normalize_answer(re.sub(r"\\sqrt\[([^\]]*)\]", r"\\root{\1}", str(answer)))
    if not s or len(s) > _MAX_LEN:
        return None
    try:
        s = _expand(s)
    except ValueError:
        return None
    for command, replacement in _COMMANDS.items():
        s = s.replace(command, replacement)
    s = s.replace("{", "(").replace("}", ")").replace("^", "**")
    if "\\" in s or not _SAFE.match(s):
        return None
    names = set(re.findall(r"[A-Za-z]+", s))
    if any(len(n) > 1 and n not in _FUNCS for n in names):
        return None
    local = {n: sympy.Symbol(n) for n in names if len(n) == 1}
    local.update(pi=sympy.pi, oo=sympy.oo, sqrt=sympy.sqrt, log=sympy.log, exp=sympy.exp, sin=sympy.sin,
                 cos=sympy.cos, tan=sympy.tan)
    try:
        return parse_expr(s, local_dict=local, global_dict={"__builtins__": {}, "Integer": sympy.Integer,
                                                            "Float": sympy.Float, "Rational": sympy.Rational,
                                                            "Symbol": sympy.Symbol},
                          transformations=standard_transformations + (implicit_multiplication_application,
                                                                      convert_xor))
    except Exception:  # sympy raises many types (SyntaxError, TypeError, TokenError) for unreadable text
        return None


def _symbolic_equal(a: str, b: str) -> bool:
    import sympy

    x, y = latex_to_sympy(a), latex_to_sympy(b)
    if x is None or y is None:
        return False
    try:
        diff = sympy.simplify(x - y)
        if diff == 0:
            return True
        if diff.is_number:
            value = abs(complex(diff.evalf()))
            return value <= _REL_TOL * max(1.0, abs(complex(y.evalf())))
    except (TypeError, ValueError, AttributeError, ZeroDivisionError):
        return False
    return False


def _split_top_level(s: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(s):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    return parts + [s[start:]]


def _elements(s: str) -> tuple[str, list[str]] | None:
    """("()" / "[]" / "(]" ..., elements) for a tuple or interval answer, else None."""
    s = s.strip()
    if len(s) >= 2 and s[0] in "([" and s[-1] in ")]":
        parts = _split_top_level(s[1:-1])
        if len(parts) > 1:
            return s[0] + s[-1], parts
    return None


def is_equiv(a: str | None, b: str | None) -> bool:
    """True when answers `a` and `b` are equal as normalised strings or as sympy expressions."""
    if a is None or b is None:
        return False
    if math_score.is_equiv(a, b):
        return True
    ea, eb = _elements(a), _elements(b)
    if ea is not None or eb is not None:
        return (ea is not None and eb is not None and ea[0] == eb[0] and len(ea[1]) == len(eb[1])
                and all(is_equiv(x, y) for x, y in zip(ea[1], eb[1], strict=True)))
    return _symbolic_equal(a, b)


def compute_score(solution_str: str, ground_truth: str) -> float:
    """1.0 when the last boxed answer of `solution_str` equals `ground_truth` (itself boxed or bare)."""
    boxed = math_score.last_boxed_only_string(solution_str)
    if boxed is None:
        return 0.0
    truth = str(ground_truth)
    truth_boxed = math_score.last_boxed_only_string(truth)
    if truth_boxed is not None:
        truth = math_score.remove_boxed(truth_boxed)
    return 1.0 if is_equiv(math_score.remove_boxed(boxed), truth) else 0.0
