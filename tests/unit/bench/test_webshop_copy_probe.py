"""bench/webshop_copy_probe.py: which product-id positions count as chosen from the page vs repeated in a turn."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench"))

from webshop_copy_probe import PRODUCT_ID_TOKEN, repeated_in_turn  # noqa: E402


def test_repeat_is_counted_within_one_assistant_turn_only():
    # two assistant turns (mask runs 1-3 and 6-7); token 7 repeats inside the first turn only
    mask = [0, 1, 1, 1, 0, 0, 1, 1]
    tokens = [5, 7, 9, 7, 7, 9, 7, 9]
    assert repeated_in_turn(mask, tokens) == [False, False, True, False, False]


def test_product_id_tokens_are_whole_webshop_ids():
    assert PRODUCT_ID_TOKEN.fullmatch("B0UO8HXUPW")
    assert not PRODUCT_ID_TOKEN.fullmatch("b0uo8hxupw") and not PRODUCT_ID_TOKEN.fullmatch("B0UO8HXUP")
