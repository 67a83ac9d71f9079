"""The WebShop environment: catalog, goals, search, pages, reward, expert policy, server."""
