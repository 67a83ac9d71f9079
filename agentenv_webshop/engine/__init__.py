"""WebShop engine: catalog loading and generation, goals, BM25 search, reward, page rendering helpers."""
