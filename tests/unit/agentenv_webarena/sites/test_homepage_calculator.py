"""The homepage calculator's expression evaluator (`sites.homepage.evaluate_expression`) and its page."""
from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from agentenv_webarena.sites.homepage import create_app, evaluate_expression


@pytest.mark.parametrize("expression,value", [
    ("2023 - 1991", 32), ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("7 / 2", 3.5), ("7 // 2", 3), ("7 % 4", 3),
    ("2 ** 10", 1024), ("-3 + +5", 2), ("  12  ", 12), ("1.5 * 4", 6.0),
])
def test_values(expression, value):
    assert evaluate_expression(expression) == value


@pytest.mark.parametrize("expression,needle", [
    ("1 / 0", "division by zero"), ("5 // 0", "division by zero"), ("2 ** 1000", "exponent over 100"),
    ("__import__('os')", "unsupported element"), ("x + 1", "unsupported element"), ("True + 1", "unsupported"),
    ("'a' * 3", "unsupported element"), ("1 +", "not an arithmetic expression"), ("[1, 2]", "unsupported element"),
])
def test_refusals(expression, needle):
    with pytest.raises(ValueError, match=needle):
        evaluate_expression(expression)


def test_calculator_page_shows_value_or_reason():
    client = TestClient(create_app(None))
    ok = client.get("/calculator.html", params={"expression": "2007 - 1991"})
    assert ok.status_code == 200 and "<output>16</output>" in ok.text
    bad = client.get("/calculator.html", params={"expression": "1/0"})
    assert bad.status_code == 200 and "Cannot compute" in bad.text and "division by zero" in bad.text
