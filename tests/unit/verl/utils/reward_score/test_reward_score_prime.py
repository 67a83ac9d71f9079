"""Prime math (symbolic equality of the boxed answer) and the data-source routing of the prime scorers."""
from __future__ import annotations

import pytest

from verl.utils.reward_score import default_compute_score, get_score_fn, prime_code, prime_math


@pytest.mark.parametrize("source", prime_math.DATA_SOURCES)
def test_numina_sources_route_to_prime_math(source):
    assert get_score_fn(source) is prime_math.compute_score


@pytest.mark.parametrize("source", ["codecontests", "apps", "codeforces", "taco"])
def test_code_sources_route_to_prime_code(source):
    assert get_score_fn(source) is prime_code.compute_score


@pytest.mark.parametrize(
    "a, b, equal",
    [
        ("\\frac{1}{2}", "0.5", True),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", True),   # only equal symbolically
        ("2\\pi", "\\pi \\cdot 2", True),
        ("x^2+2x+1", "(x+1)^2", True),
        ("\\sqrt[3]{8}", "2", True),
        ("\\sqrt{8}", "2\\sqrt{2}", True),
        ("2^{10}", "1024", True),
        ("(1,2)", "(1, \\frac{4}{2})", True),
        ("[1,2)", "(1,2)", False),          # interval ends must agree
        ("(1,2)", "(1,2,3)", False),
        ("\\frac{1}{3}", "0.333", False),   # close is not equal
        ("3", "4", False),
        ("x+1", "x+2", False),
    ],
)
def test_prime_math_equivalence(a, b, equal):
    assert prime_math.is_equiv(a, b) is equal
    assert prime_math.is_equiv(b, a) is equal


def test_prime_math_score_through_default_compute_score():
    assert default_compute_score("numina_olympiads", "so the answer is \\boxed{\\frac{1}{2}}.", "0.5") == 1.0
    assert default_compute_score("numina_cn_k12", "\\boxed{0.5}", "$\\boxed{\\dfrac12}$") == 1.0
    assert default_compute_score("numina_amc_aime", "\\boxed{0.6}", "\\frac{1}{2}") == 0.0
    assert default_compute_score("numina_amc_aime", "one half", "\\frac{1}{2}") == 0.0  # nothing boxed


@pytest.mark.parametrize("text", ["__import__('os').system('true')", "x.__class__", "eval(1)", "lambda: 1",
                                  "open(1)"])
def test_untrusted_answers_are_not_evaluated(text):
    # anything beyond arithmetic, a few functions and one-letter variables is refused before sympy parses it
    assert prime_math.latex_to_sympy(text) is None
    assert prime_math.is_equiv(text, "1") is False


def test_latex_to_sympy_reads_common_forms():
    import sympy

    assert prime_math.latex_to_sympy("\\frac{3}{4}") == sympy.Rational(3, 4)
    assert prime_math.latex_to_sympy("\\infty") == sympy.oo
    assert prime_math.latex_to_sympy("\\frac{1}{2") is None   # unbalanced
