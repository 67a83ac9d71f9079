"""WebArena environment server (Playwright + Chromium). Built in a later issue; empty for now."""
