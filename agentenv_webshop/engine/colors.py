"""Colour names for WebShop's option-reward colour normalisation.

Owns `COLOR_SET` (our own list of common colour names, roughly alphabetical like WebShop's) and
`normalize_color`. Order matters: `normalize_color` returns the FIRST listed colour found, so
'violet lavender' -> 'lavender' and, a WebShop quirk we keep, 'standard' -> 'tan'.
"""
from __future__ import annotations

import functools
from typing import Any

__all__ = ["COLOR_SET", "normalize_color"]

COLOR_SET: tuple[str, ...] = (
    "alabaster", "almond", "amber", "apricot", "aqua", "ash", "azure",
    "beige", "black", "blue", "blush", "bronze", "brown", "burgundy",
    "camel", "caramel", "champagne", "charcoal", "cherry", "chocolate", "clear", "coffee",
    "copper", "coral", "cream", "crimson", "cyan",
    "denim",
    "ebony", "emerald", "espresso",
    "fuchsia",
    "gold", "gray", "green", "grey",
    "hot pink",
    "indigo", "ivory",
    "jade",
    "khaki",
    "lavender", "lemon", "light blue", "light brown", "light gray", "light grey", "light pink",
    "lilac", "lime",
    "magenta", "maroon", "mauve", "mint", "mocha", "multicolor",
    "natural", "navy", "nude",
    "olive", "orange",
    "peach", "pearl", "pink", "plum", "purple",
    "red", "rose",
    "sage", "salmon", "silver", "sky blue",
    "tan", "taupe", "teal", "turquoise",
    "violet",
    "walnut", "white", "wine",
    "yellow",
)


@functools.lru_cache(maxsize=65536)
def normalize_color(value: Any) -> Any:
    """Return the first `COLOR_SET` entry contained in `value`, else `value` unchanged.

    For a string, "contained" means substring; for a tuple (WebShop passes `(name, value)`
    tuples for synthetic goals) it means element membership, so `('color', 'grey')` -> 'grey'
    but `('color', 'dark grey')` is returned unchanged. Values must be hashable (cached).
    """
    for color in COLOR_SET:
        if color in value:
            return color
    return value
