"""The code host's seed vocabulary: users, groups, projects, and the phrase banks issues, merge requests
and commits are drawn from.

Owns only static text; `seed` turns it into rows with a fixed `random.Random`. Stable API (other
sites, e.g. the wiki, read it so their articles agree with the code host):

- `PRIMARY_USER`: "byteblaze", WebArena's gitlab account.
- `USERS`: `User(username, name, bio, location)`; the first is the primary user.
- `PROFILES`: username -> (status message, website URL) for the users who have set them.
- `GROUPS`: `Group(path, name, description)`: namespaces shared by several users.
- `PROJECTS`: `Project(namespace, path, name, description, language, license, created, topics)`, where
  `namespace` is a user name or a group path, so the project lives at `/<namespace>/<path>`;
  `created` is an ISO date (`YYYY-MM-DD`), `license` an SPDX id ("" = none), `topics` a tuple of words.
  Star, fork, issue and commit counts are not here: they come from the seed (`seed.py`).
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["PRIMARY_USER", "User", "Group", "Project", "USERS", "PROFILES", "GROUPS", "PROJECTS", "LICENSES",
           "LABELS", "ISSUE_TITLES", "MR_TITLES", "COMMIT_TITLES", "COMMENTS", "MILESTONES", "LANGUAGE_FILES"]

PRIMARY_USER = "byteblaze"


class User(NamedTuple):
    """A code host account (`/<username>` is its profile)."""

    username: str
    name: str
    bio: str
    location: str


class Group(NamedTuple):
    """A group namespace (`/<path>` is its page)."""

    path: str
    name: str
    description: str


class Project(NamedTuple):
    """A project (repository) at `/<namespace>/<path>`."""

    namespace: str
    path: str
    name: str
    description: str
    language: str
    license: str
    created: str
    topics: tuple[str, ...]


USERS: list[User] = [
    User(PRIMARY_USER, "Byte Blaze", "Web developer who likes small tools and accessible sites.", "Pittsburgh, PA"),
    User("abisubramanya27", "Abishek Subramanya", "Systems and compilers student.", "Chennai, India"),
    User("vinta", "Vinta Chen", "Curating lists of good Python libraries.", "Taipei, Taiwan"),
    User("yjlou", "Yi-Jie Lou", "Backend engineer, cache enthusiast.", "Hsinchu, Taiwan"),
    User("convexegg", "Connie Vega", "Data visualisation and maps.", "Austin, TX"),
    User("lahwaacz", "Jakub Klinkovsky", "Arch Linux wiki maintainer.", "Prague, Czechia"),
    User("koush", "Koushik Dutta", "Mobile and home automation hacker.", "Seattle, WA"),
    User("ericwbailey", "Eric Bailey", "Accessibility advocate and designer.", "Boston, MA"),
    User("Seirdy", "Rohan Kumar", "Writes about the indie web and privacy.", "Seattle, WA"),
    User("Roshanjossey", "Roshan Jossey", "Helps first-time contributors.", "Kochi, India"),
    User("sarah_khan", "Sarah Khan", "Rust and embedded systems.", "Toronto, Canada"),
    User("mjperez", "Miguel Perez", "Game developer and shader nerd.", "Madrid, Spain"),
    User("liu_wei", "Liu Wei", "Machine learning engineer.", "Beijing, China"),
    User("anna_k", "Anna Kowalski", "Documentation writer.", "Krakow, Poland"),
    User("tom_b", "Tom Becker", "DevOps and CI pipelines.", "Berlin, Germany"),
    User("priya_n", "Priya Nair", "Frontend developer, loves CSS grids.", "Bangalore, India"),
    User("jdoe", "John Doe", "Generalist programmer.", "Denver, CO"),
    User("emily_r", "Emily Roberts", "Security researcher.", "London, UK"),
    User("omar_f", "Omar Farouk", "Distributed systems engineer.", "Cairo, Egypt"),
    User("nina_s", "Nina Schulz", "Open source maintainer of parsers.", "Hamburg, Germany"),
    User("kenji_t", "Kenji Tanaka", "Command-line tools and terminals.", "Osaka, Japan"),
    User("lucas_m", "Lucas Martin", "Web performance and caching.", "Lyon, France"),
    User("fatima_z", "Fatima Zahra", "Data engineer.", "Casablanca, Morocco"),
    User("diego_a", "Diego Alvarez", "Mobile apps in Kotlin.", "Bogota, Colombia"),
    User("grace_h", "Grace Hopper Fan", "Retro computing and COBOL jokes.", "Arlington, VA"),
    User("ivan_p", "Ivan Petrov", "Databases and query planners.", "Sofia, Bulgaria"),
    User("maria_g", "Maria Garcia", "Design systems.", "Mexico City, Mexico"),
    User("sam_lee", "Sam Lee", "Student learning Go.", "Singapore"),
    User("olivia_w", "Olivia Wang", "Research software engineer.", "Vancouver, Canada"),
    User("ahmed_h", "Ahmed Hassan", "Networking and protocols.", "Dubai, UAE"),
    User("chloe_d", "Chloe Dubois", "Static site generators.", "Montreal, Canada"),
    User("ben_c", "Ben Carter", "Testing and QA automation.", "Leeds, UK"),
    User("zoe_m", "Zoe Miller", "Accessibility tester.", "Portland, OR"),
    User("raj_p", "Raj Patel", "Compilers and language tools.", "Pune, India"),
    User("hannah_j", "Hannah Jensen", "Bioinformatics pipelines.", "Copenhagen, Denmark"),
    User("leo_r", "Leo Rossi", "Audio plugins in C++.", "Milan, Italy"),
    User("mia_k", "Mia Kim", "Frontend tooling.", "Seoul, South Korea"),
    User("noah_b", "Noah Brown", "Home lab and self-hosting.", "Chicago, IL"),
    User("ella_s", "Ella Svensson", "Typography on the web.", "Stockholm, Sweden"),
    User("victor_l", "Victor Lima", "Scientific Python.", "Sao Paulo, Brazil"),
]

PROFILES: dict[str, tuple[str, str]] = {
    PRIMARY_USER: ("Writing accessible components", "https://gimmiethat.space"),
    "ericwbailey": ("Auditing forms for screen readers", "https://ericwbailey.website"),
    "Seirdy": ("Offline until the weekend", "https://seirdy.one"),
    "lahwaacz": ("", "https://wiki.archlinux.org/title/User:Lahwaacz"),
}

GROUPS: list[Group] = [
    Group("a11yproject", "The A11Y Project", "A community effort to make digital accessibility easier."),
    Group("primer", "Primer", "Design system components and guidelines."),
    Group("dataviz", "Data Viz Collective", "Open tools for charts and maps."),
    Group("rustaceans", "Rustaceans", "Small Rust crates maintained together."),
    Group("mlops", "MLOps Lab", "Tools for training and serving models."),
    Group("webtools", "Web Tools", "Browser extensions and front-end utilities."),
    Group("devops-guild", "DevOps Guild", "CI templates, containers and deployment scripts."),
    Group("docs-team", "Docs Team", "Documentation sites and writing guides."),
]

LICENSES: dict[str, str] = {
    "MIT": "MIT License",
    "Apache-2.0": "Apache License 2.0",
    "GPL-3.0": "GNU General Public License v3.0",
    "BSD-3-Clause": "BSD 3-Clause License",
    "MPL-2.0": "Mozilla Public License 2.0",
    "AGPL-3.0": "GNU Affero General Public License v3.0",
    "CC0-1.0": "Creative Commons Zero v1.0 Universal",
    "CC-BY-4.0": "Creative Commons Attribution 4.0 International",
}

_P = Project
PROJECTS: list[Project] = [
    # the primary user's own projects
    _P(PRIMARY_USER, "dotfiles", "dotfiles", "My shell, editor and terminal configuration files.", "Shell", "MIT",
       "2021-03-14", ("dotfiles", "shell")),
    _P(PRIMARY_USER, "timeit", "timeit", "A tiny command-line stopwatch for timing shell commands.", "Python", "MIT",
       "2021-06-02", ("cli", "timing")),
    _P(PRIMARY_USER, "a11y-webring.club", "a11y-webring.club", "A webring for personal sites that care about "
       "accessibility.", "HTML", "MIT", "2021-09-20", ("accessibility", "webring")),
    _P(PRIMARY_USER, "solarized-prism-theme", "solarized-prism-theme", "A Solarized colour theme for the Prism "
       "syntax highlighter.", "CSS", "MIT", "2020-11-05", ("theme", "css")),
    _P(PRIMARY_USER, "gimmiethat.space", "gimmiethat.space", "Source of my personal homepage and link collections.",
       "HTML", "", "2022-01-09", ("homepage",)),
    _P(PRIMARY_USER, "cloud-to-butt", "cloud-to-butt", "Browser extension that replaces a word on every page with "
       "another.", "JavaScript", "MIT", "2020-04-01", ("browser-extension", "humor")),
    _P(PRIMARY_USER, "empathy-prompts", "empathy-prompts", "Writing prompts for practising empathy in code review.",
       "Markdown", "CC0-1.0", "2022-05-17", ("code-review", "writing")),
    _P(PRIMARY_USER, "weather-cli", "weather-cli", "Prints today's forecast in the terminal.", "Go", "Apache-2.0",
       "2022-08-30", ("cli", "weather")),
    _P(PRIMARY_USER, "recipe-box", "recipe-box", "A static site of family recipes.", "JavaScript", "",
       "2023-01-12", ("recipes", "static-site")),
    _P(PRIMARY_USER, "pomodoro-timer", "pomodoro-timer", "A minimal pomodoro timer for the browser.", "TypeScript",
       "MIT", "2022-11-21", ("productivity",)),
    _P(PRIMARY_USER, "markdown-lint-rules", "markdown-lint-rules", "Custom rules for markdownlint.", "JavaScript",
       "MIT", "2021-12-03", ("markdown", "lint")),
    _P(PRIMARY_USER, "budget-tracker", "budget-tracker", "Track monthly spending from CSV bank exports.", "Python",
       "GPL-3.0", "2023-02-18", ("finance", "csv")),
    # groups
    _P("a11yproject", "a11yproject.com", "a11yproject.com", "The A11Y Project website: a community-driven effort to "
       "make digital accessibility easier.", "JavaScript", "Apache-2.0", "2019-02-11", ("accessibility", "website")),
    _P("a11yproject", "checklist", "checklist", "An accessibility checklist for web projects.", "Markdown",
       "Apache-2.0", "2019-07-08", ("accessibility", "checklist")),
    _P("a11yproject", "color-contrast-checker", "color-contrast-checker", "Checks text and background colours "
       "against WCAG contrast ratios.", "TypeScript", "MIT", "2020-03-19", ("accessibility", "color")),
    _P("primer", "design", "design", "Guidelines, principles and patterns of the Primer design system.", "MDX",
       "MIT", "2019-10-01", ("design-system",)),
    _P("primer", "octicons", "octicons", "A scalable set of icons handcrafted for the Primer design system.",
       "JavaScript", "MIT", "2019-05-22", ("icons", "svg")),
    _P("primer", "css", "css", "The CSS implementation of the Primer design system.", "SCSS", "MIT", "2019-06-14",
       ("css", "design-system")),
    _P("dataviz", "chartkit", "chartkit", "Declarative charts for the web with sensible defaults.", "TypeScript",
       "BSD-3-Clause", "2020-09-09", ("charts", "visualization")),
    _P("dataviz", "tilemaker", "tilemaker", "Make vector map tiles from OpenStreetMap extracts.", "C++",
       "BSD-3-Clause", "2020-02-27", ("maps", "openstreetmap")),
    _P("dataviz", "colorbrewer-py", "colorbrewer-py", "ColorBrewer palettes for Python plotting libraries.",
       "Python", "Apache-2.0", "2021-04-30", ("color", "python")),
    _P("rustaceans", "tiny-http-rs", "tiny-http-rs", "A small synchronous HTTP server library in Rust.", "Rust",
       "MIT", "2020-08-16", ("http", "rust")),
    _P("rustaceans", "ringbuf", "ringbuf", "A lock-free ring buffer for embedded Rust.", "Rust", "Apache-2.0",
       "2021-01-25", ("embedded", "rust")),
    _P("rustaceans", "cargo-tidy", "cargo-tidy", "A cargo subcommand that removes unused dependencies.", "Rust",
       "MIT", "2022-03-07", ("cargo", "rust")),
    _P("mlops", "feature-store", "feature-store", "A minimal feature store backed by SQLite and Parquet.", "Python",
       "Apache-2.0", "2021-07-13", ("ml", "data")),
    _P("mlops", "model-registry", "model-registry", "Version and promote trained models with a REST API.", "Python",
       "Apache-2.0", "2021-10-02", ("ml", "api")),
    _P("mlops", "gpu-monitor", "gpu-monitor", "Dashboards for GPU use across a training cluster.", "Go", "MIT",
       "2022-06-11", ("gpu", "monitoring")),
    _P("webtools", "tab-sorter", "tab-sorter", "Browser extension that sorts tabs by site.", "JavaScript", "MIT",
       "2021-02-08", ("browser-extension",)),
    _P("webtools", "css-minify", "css-minify", "A fast CSS minifier with source maps.", "JavaScript", "MIT",
       "2020-12-15", ("css", "build")),
    _P("webtools", "lazy-images", "lazy-images", "Lazy-load images with the native loading attribute and a "
       "fallback.", "JavaScript", "MIT", "2021-05-05", ("performance", "images")),
    _P("devops-guild", "ci-templates", "ci-templates", "Reusable CI pipeline templates for common stacks.", "YAML",
       "MIT", "2020-10-10", ("ci", "templates")),
    _P("devops-guild", "docker-base-images", "docker-base-images", "Slim base images rebuilt every week.",
       "Dockerfile", "Apache-2.0", "2020-07-07", ("docker", "containers")),
    _P("devops-guild", "terraform-modules", "terraform-modules", "Terraform modules for small web deployments.",
       "HCL", "MPL-2.0", "2021-08-19", ("terraform", "infrastructure")),
    _P("docs-team", "style-guide", "style-guide", "The writing style guide for our documentation.", "Markdown",
       "CC-BY-4.0", "2020-01-20", ("docs", "writing")),
    _P("docs-team", "docs-site", "docs-site", "Static documentation site generator configuration.", "Python", "MIT",
       "2020-05-29", ("docs", "static-site")),
    # other users' projects
    _P("vinta", "awesome-python-tools", "awesome-python-tools", "A curated list of handy Python tools.", "Markdown",
       "CC0-1.0", "2019-03-03", ("awesome-list", "python")),
    _P("yjlou", "simcache", "SimCache", "A simulator for comparing cache eviction policies.", "Python", "MIT",
       "2022-04-04", ("cache", "simulation")),
    _P("yjlou", "kv-bench", "kv-bench", "Benchmarks for embedded key-value stores.", "C", "BSD-3-Clause",
       "2021-11-11", ("benchmark", "database")),
    _P("convexegg", "super-charts", "super-charts", "Chart recipes for newsrooms.", "JavaScript", "MIT",
       "2021-03-22", ("charts",)),
    _P("lahwaacz", "wiki-scripts", "wiki-scripts", "Maintenance scripts for a MediaWiki installation.", "Python",
       "GPL-3.0", "2019-09-15", ("mediawiki", "bots")),
    _P("koush", "home-bridge", "home-bridge", "Bridge smart home devices to one local dashboard.", "TypeScript",
       "Apache-2.0", "2020-06-06", ("smart-home",)),
    _P("ericwbailey", "accessible-html-content-patterns", "accessible-html-content-patterns", "The full HTML "
       "element list with accessible usage notes.", "HTML", "MIT", "2020-02-02", ("accessibility", "html")),
    _P("ericwbailey", "a11y-syntax-highlighting", "a11y-syntax-highlighting", "Accessible colour themes for code "
       "syntax highlighting.", "CSS", "MIT", "2020-05-12", ("accessibility", "theme")),
    _P("Seirdy", "indieweb-checker", "indieweb-checker", "Checks a personal site for IndieWeb building blocks.",
       "Go", "AGPL-3.0", "2022-02-14", ("indieweb",)),
    _P("Roshanjossey", "first-contributions", "first-contributions", "Help beginners make their first open source "
       "contribution.", "Markdown", "MIT", "2019-01-15", ("beginners", "tutorial")),
    _P("sarah_khan", "embedded-blink", "embedded-blink", "Blink an LED on five microcontrollers in Rust.", "Rust",
       "MIT", "2021-09-01", ("embedded",)),
    _P("mjperez", "shader-playground", "shader-playground", "Live-edit GLSL fragment shaders in the browser.",
       "JavaScript", "MIT", "2021-06-18", ("graphics", "webgl")),
    _P("liu_wei", "tiny-transformer", "tiny-transformer", "A readable transformer language model in 300 lines.",
       "Python", "MIT", "2022-12-01", ("ml", "nlp")),
    _P("anna_k", "docs-linter", "docs-linter", "Lint prose in documentation for passive voice and jargon.",
       "Python", "Apache-2.0", "2021-04-11", ("docs", "lint")),
    _P("tom_b", "deploy-bot", "deploy-bot", "A chat bot that runs deployments on command.", "Go", "MIT",
       "2022-07-27", ("chatops", "deploy")),
    _P("priya_n", "grid-layouts", "grid-layouts", "Copy-paste CSS grid layouts.", "CSS", "MIT", "2021-10-30",
       ("css",)),
    _P("kenji_t", "term-colors", "term-colors", "Print every terminal colour with its code.", "Shell", "MIT",
       "2020-03-03", ("terminal",)),
    _P("lucas_m", "edge-cache", "edge-cache", "Cache rules for static sites on a CDN edge.", "TypeScript", "MIT",
       "2022-09-14", ("cache", "cdn")),
    _P("ivan_p", "query-planner-notes", "query-planner-notes", "Notes and examples on SQL query planning.", "SQL",
       "CC-BY-4.0", "2021-01-09", ("sql", "database")),
    _P("olivia_w", "lab-notebook", "lab-notebook", "Templates for reproducible research notebooks.", "Python",
       "BSD-3-Clause", "2022-03-28", ("research", "notebooks")),
    _P("raj_p", "toy-compiler", "toy-compiler", "A compiler for a small teaching language.", "C", "MIT",
       "2021-05-23", ("compiler", "education")),
    _P("leo_r", "reverb-plugin", "reverb-plugin", "A simple reverb audio plugin.", "C++", "GPL-3.0", "2022-10-08",
       ("audio",)),
    _P("noah_b", "homelab", "homelab", "Configuration of my home server.", "YAML", "MIT", "2021-12-24",
       ("self-hosted",)),
    _P("victor_l", "sci-plots", "sci-plots", "Publication-quality plot styles for matplotlib.", "Python", "MIT",
       "2020-11-29", ("plotting", "science")),
    _P("chloe_d", "jamstack-starter", "jamstack-starter", "A starter template for static sites with a headless "
       "CMS.", "JavaScript", "MIT", "2022-04-19", ("static-site",)),
]

LABELS: list[tuple[str, str]] = [  # name, colour
    ("bug", "#d9534f"), ("enhancement", "#5cb85c"), ("documentation", "#0275d8"), ("question", "#cc338b"),
    ("good first issue", "#7057ff"), ("help wanted", "#008672"), ("accessibility", "#f0ad4e"),
    ("performance", "#8e44ad"),
]

# Issue titles: "{x}" is filled with one of the project's topics or a generic noun.
ISSUE_TITLES: list[str] = [
    "Crash when the config file is empty", "Add a dark mode", "Document the {x} options",
    "Support Windows paths", "Improve the error message for missing files", "Typo in the README",
    "Tests fail on Python 3.12", "Add keyboard navigation", "Slow start-up with large inputs",
    "Broken link in the contributing guide", "Add an example for {x}", "Colour contrast too low on buttons",
    "Upgrade dependencies", "Publish a release with the latest fixes", "Missing alt text on images",
    "Allow configuring the output directory", "Add a changelog", "Flaky test in the CI pipeline",
    "Screen reader announces the menu twice", "Explain how to install from source", "Cache results of {x}",
    "Add a command-line flag for verbose output", "Make the {x} module optional", "Font size too small on mobile",
]

MR_TITLES: list[str] = [
    "Fix typo in README", "Add dark mode toggle", "Update dependencies", "Improve error messages",
    "Add tests for the parser", "Refactor the configuration loader", "Add keyboard shortcuts",
    "Fix broken links", "Speed up start-up", "Add contributing guide", "Support Windows paths",
    "Add alt text to images", "Add a changelog", "Document {x}",
]

COMMIT_TITLES: list[str] = [
    "Initial commit", "Add README", "Fix typo", "Update dependencies", "Add tests", "Refactor config loading",
    "Improve error messages", "Add license", "Fix failing build", "Add example", "Update docs",
    "Bump version", "Clean up imports", "Handle empty input", "Add CI configuration", "Speed up main loop",
    "Add command-line options", "Fix off-by-one error", "Rename variables for clarity", "Add changelog entry",
]

COMMENTS: list[str] = [
    "Thanks for reporting this, I can reproduce it.", "I would be happy to work on this.",
    "Could you share the exact steps?", "This is fixed on the main branch now.", "Looks good to me!",
    "Can we add a test for this case?", "Nice catch, thank you.", "I think this duplicates an older issue.",
    "Let us discuss this in the next meeting.", "Approved, merging once CI passes.",
]

# (title, description): milestone names the seed gives some projects.
MILESTONES: list[tuple[str, str]] = [
    ("v1.0", "First stable release."), ("v1.1", "Bug fixes after the first release."),
    ("v2.0", "Big redesign."), ("Beta", "Feature-complete beta."), ("Docs sprint", "Write missing docs."),
]

# language -> (source file path, line template with "{name}"), used to fill repositories.
LANGUAGE_FILES: dict[str, tuple[str, str]] = {
    "Python": ("src/main.py", '"""{name}: entry point."""\n\n\ndef main() -> None:\n    print("{name}")\n'),
    "Go": ("main.go", 'package main\n\nimport "fmt"\n\nfunc main() {{\n\tfmt.Println("{name}")\n}}\n'),
    "Rust": ("src/lib.rs", "//! {name}\n\npub fn name() -> &'static str {{\n    \"{name}\"\n}}\n"),
    "JavaScript": ("src/index.js", "// {name}\nexport function name() {{\n  return '{name}';\n}}\n"),
    "TypeScript": ("src/index.ts", "// {name}\nexport const name: string = '{name}';\n"),
    "Shell": ("install.sh", "#!/bin/sh\n# install {name}\nset -e\necho 'installing {name}'\n"),
    "HTML": ("index.html", "<!DOCTYPE html>\n<html><head><title>{name}</title></head><body></body></html>\n"),
    "CSS": ("style.css", "/* {name} */\n:root {{ --accent: #268bd2; }}\n"),
    "SCSS": ("src/index.scss", "// {name}\n$accent: #0366d6;\n"),
    "C": ("src/main.c", '#include <stdio.h>\n\nint main(void) {{\n    puts("{name}");\n    return 0;\n}}\n'),
    "C++": ("src/main.cpp", '#include <iostream>\n\nint main() {{\n    std::cout << "{name}";\n}}\n'),
    "Markdown": ("docs/index.md", "# {name}\n\nStart here.\n"),
    "MDX": ("docs/index.mdx", "# {name}\n\nGuidelines start here.\n"),
    "YAML": ("config.yml", "name: {name}\nversion: 1\n"),
    "Dockerfile": ("Dockerfile", "FROM debian:stable-slim\nLABEL name=\"{name}\"\n"),
    "HCL": ("main.tf", 'variable "name" {{\n  default = "{name}"\n}}\n'),
    "SQL": ("examples/plan.sql", "-- {name}\nEXPLAIN SELECT 1;\n"),
}
