"""The wiki's static topic vocabulary: programming languages and software tools (what the code host's
projects are written in and built with) and the books, films, games, albums, sky objects and periods of
history the forum talks about.

Owns only facts as data (`TOPICS`); `corpus` turns each entry into an article (lead, infobox, sections)
with the same sentence shapes as the region's places. Facts follow the real Wikipedia infoboxes, so
an agent's prior knowledge and the wiki agree.
"""
from __future__ import annotations

from typing import NamedTuple

__all__ = ["Topic", "TOPICS", "KIND_FACTS", "LANGUAGE_ARTICLES"]


class Topic(NamedTuple):
    """One topic article: its title, kind (a key of `KIND_FACTS`) and infobox values in that order."""

    title: str
    kind: str
    values: tuple[str, ...]


# kind -> (infobox labels, the list article that gathers the kind, the year label the lead uses)
KIND_FACTS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "programming language": (("Designed by", "First appeared", "File extension"),
                             "List of computer languages", "First appeared"),
    "software": (("Developer", "Initial release", "Written in"), "List of software tools", "Initial release"),
    "novel": (("Author", "Published", "Genre"), "List of novels", "Published"),
    "film": (("Directed by", "Release year", "Genre"), "List of films", "Release year"),
    "video game": (("Developer", "Release year", "Genre"), "List of video games", "Release year"),
    "album": (("Artist", "Released", "Genre"), "List of albums", "Released"),
    "astronomical object": (("Type", "Location", "Discovered"), "List of astronomical objects", "Discovered"),
    "historical period": (("Region", "Began", "Ended"), "List of historical periods", "Began"),
}

_L, _S = "programming language", "software"

TOPICS: tuple[Topic, ...] = (
    Topic("Python (programming language)", _L, ("Guido van Rossum", "1991", ".py")),
    Topic("JavaScript", _L, ("Brendan Eich", "1995", ".js")),
    Topic("TypeScript", _L, ("Anders Hejlsberg", "2012", ".ts")),
    Topic("Java (programming language)", _L, ("James Gosling", "1995", ".java")),
    Topic("C (programming language)", _L, ("Dennis Ritchie", "1972", ".c")),
    Topic("C++", _L, ("Bjarne Stroustrup", "1985", ".cpp")),
    Topic("C Sharp (programming language)", _L, ("Anders Hejlsberg", "2000", ".cs")),
    Topic("Go (programming language)", _L, ("Robert Griesemer, Rob Pike and Ken Thompson", "2009", ".go")),
    Topic("Rust (programming language)", _L, ("Graydon Hoare", "2015", ".rs")),
    Topic("Ruby (programming language)", _L, ("Yukihiro Matsumoto", "1995", ".rb")),
    Topic("PHP", _L, ("Rasmus Lerdorf", "1995", ".php")),
    Topic("Kotlin (programming language)", _L, ("JetBrains", "2011", ".kt")),
    Topic("Swift (programming language)", _L, ("Chris Lattner", "2014", ".swift")),
    Topic("Scala (programming language)", _L, ("Martin Odersky", "2004", ".scala")),
    Topic("Perl", _L, ("Larry Wall", "1987", ".pl")),
    Topic("Lua (programming language)", _L, ("Roberto Ierusalimschy", "1993", ".lua")),
    Topic("R (programming language)", _L, ("Ross Ihaka and Robert Gentleman", "1993", ".r")),
    Topic("Julia (programming language)", _L, ("Jeff Bezanson, Stefan Karpinski and Viral B. Shah", "2012", ".jl")),
    Topic("Elixir (programming language)", _L, ("José Valim", "2012", ".ex")),
    Topic("Erlang (programming language)", _L, ("Joe Armstrong", "1986", ".erl")),
    Topic("Haskell", _L, ("Lennart Augustsson and others", "1990", ".hs")),
    Topic("Dart (programming language)", _L, ("Lars Bak and Kasper Lund", "2011", ".dart")),
    Topic("Clojure", _L, ("Rich Hickey", "2007", ".clj")),
    Topic("Objective-C", _L, ("Brad Cox and Tom Love", "1984", ".m")),
    Topic("Bash (Unix shell)", _L, ("Brian Fox", "1989", ".sh")),
    Topic("HTML", _L, ("Tim Berners-Lee", "1993", ".html")),
    Topic("CSS", _L, ("Håkon Wium Lie", "1996", ".css")),
    Topic("Markdown", _L, ("John Gruber", "2004", ".md")),
    Topic("YAML", _L, ("Clark Evans", "2001", ".yaml")),
    Topic("SQL", _L, ("Donald D. Chamberlin and Raymond F. Boyce", "1974", ".sql")),
    Topic("Sass (style sheet language)", _L, ("Hampton Catlin", "2006", ".scss")),
    Topic("Git", _S, ("Linus Torvalds", "2005", "C")),
    Topic("Linux", _S, ("Linus Torvalds", "1991", "C")),
    Topic("Docker (software)", _S, ("Solomon Hykes", "2013", "Go")),
    Topic("Kubernetes", _S, ("Google", "2014", "Go")),
    Topic("Node.js", _S, ("Ryan Dahl", "2009", "C++")),
    Topic("React (software)", _S, ("Jordan Walke", "2013", "JavaScript")),
    Topic("Vue.js", _S, ("Evan You", "2014", "TypeScript")),
    Topic("Django (web framework)", _S, ("Adrian Holovaty and Simon Willison", "2005", "Python")),
    Topic("Flask (web framework)", _S, ("Armin Ronacher", "2010", "Python")),
    Topic("Ruby on Rails", _S, ("David Heinemeier Hansson", "2004", "Ruby")),
    Topic("PostgreSQL", _S, ("PostgreSQL Global Development Group", "1996", "C")),
    Topic("SQLite", _S, ("D. Richard Hipp", "2000", "C")),
    Topic("Redis", _S, ("Salvatore Sanfilippo", "2009", "C")),
    Topic("Nginx", _S, ("Igor Sysoev", "2004", "C")),
    Topic("Vim (text editor)", _S, ("Bram Moolenaar", "1991", "C")),
    Topic("GNU Emacs", _S, ("Richard Stallman", "1985", "C")),
    Topic("TensorFlow", _S, ("Google Brain", "2015", "C++")),
    Topic("PyTorch", _S, ("Meta AI", "2016", "C++")),
    Topic("NumPy", _S, ("Travis Oliphant", "2006", "C")),
    Topic("Pandas (software)", _S, ("Wes McKinney", "2008", "Python")),
    Topic("Matplotlib", _S, ("John D. Hunter", "2003", "Python")),
    Topic("Scikit-learn", _S, ("David Cournapeau", "2007", "Python")),
    Topic("Project Jupyter", _S, ("Fernando Pérez and Brian Granger", "2014", "Python")),
    Topic("jQuery", _S, ("John Resig", "2006", "JavaScript")),
    Topic("Bootstrap (front-end framework)", _S, ("Mark Otto and Jacob Thornton", "2011", "JavaScript")),
    Topic("Webpack", _S, ("Tobias Koppers", "2012", "JavaScript")),
    Topic("Jenkins (software)", _S, ("Kohsuke Kawaguchi", "2011", "Java")),
    Topic("Ansible (software)", _S, ("Michael DeHaan", "2012", "Python")),
    Topic("Terraform (software)", _S, ("Mitchell Hashimoto", "2014", "Go")),
    Topic("Visual Studio Code", _S, ("Microsoft", "2015", "TypeScript")),
    Topic("Homebrew (package manager)", _S, ("Max Howell", "2009", "Ruby")),
    Topic("LaTeX", _S, ("Leslie Lamport", "1984", "TeX")),
    Topic("Electron (software framework)", _S, ("Cheng Zhao", "2013", "C++")),
    Topic("Svelte", _S, ("Rich Harris", "2016", "TypeScript")),
    Topic("Dune (novel)", "novel", ("Frank Herbert", "1965", "Science fiction")),
    Topic("The Left Hand of Darkness", "novel", ("Ursula K. Le Guin", "1969", "Science fiction")),
    Topic("Pride and Prejudice", "novel", ("Jane Austen", "1813", "Romance")),
    Topic("The Name of the Wind", "novel", ("Patrick Rothfuss", "2007", "Fantasy")),
    Topic("Middlemarch", "novel", ("George Eliot", "1871", "Realist novel")),
    Topic("Project Hail Mary", "novel", ("Andy Weir", "2021", "Science fiction")),
    Topic("The Count of Monte Cristo", "novel", ("Alexandre Dumas", "1844", "Adventure")),
    Topic("Piranesi (novel)", "novel", ("Susanna Clarke", "2020", "Fantasy")),
    Topic("Station Eleven", "novel", ("Emily St. John Mandel", "2014", "Post-apocalyptic fiction")),
    Topic("The Remains of the Day", "novel", ("Kazuo Ishiguro", "1989", "Literary fiction")),
    Topic("Foundation (Asimov novel)", "novel", ("Isaac Asimov", "1951", "Science fiction")),
    Topic("Circe (novel)", "novel", ("Madeline Miller", "2018", "Fantasy")),
    Topic("The Road", "novel", ("Cormac McCarthy", "2006", "Post-apocalyptic fiction")),
    Topic("Anna Karenina", "novel", ("Leo Tolstoy", "1878", "Realist novel")),
    Topic("Neuromancer", "novel", ("William Gibson", "1984", "Cyberpunk")),
    Topic("The Hobbit", "novel", ("J. R. R. Tolkien", "1937", "Fantasy")),
    Topic("Alien (film)", "film", ("Ridley Scott", "1979", "Science fiction horror")),
    Topic("Spirited Away", "film", ("Hayao Miyazaki", "2001", "Animated fantasy")),
    Topic("The Godfather", "film", ("Francis Ford Coppola", "1972", "Crime")),
    Topic("Arrival (film)", "film", ("Denis Villeneuve", "2016", "Science fiction")),
    Topic("Mad Max: Fury Road", "film", ("George Miller", "2015", "Action")),
    Topic("Parasite (2019 film)", "film", ("Bong Joon-ho", "2019", "Black comedy thriller")),
    Topic("Casablanca (film)", "film", ("Michael Curtiz", "1942", "Romantic drama")),
    Topic("Jaws (film)", "film", ("Steven Spielberg", "1975", "Thriller")),
    Topic("Heat (1995 film)", "film", ("Michael Mann", "1995", "Crime")),
    Topic("The Thing (1982 film)", "film", ("John Carpenter", "1982", "Science fiction horror")),
    Topic("Paddington 2", "film", ("Paul King", "2017", "Family comedy")),
    Topic("Blade Runner", "film", ("Ridley Scott", "1982", "Science fiction")),
    Topic("Whiplash (2014 film)", "film", ("Damien Chazelle", "2014", "Drama")),
    Topic("Hollow Knight", "video game", ("Team Cherry", "2017", "Metroidvania")),
    Topic("Stardew Valley", "video game", ("ConcernedApe", "2016", "Farm life simulation")),
    Topic("Elden Ring", "video game", ("FromSoftware", "2022", "Action role-playing")),
    Topic("Hades (video game)", "video game", ("Supergiant Games", "2020", "Roguelike")),
    Topic("Portal 2", "video game", ("Valve", "2011", "Puzzle-platform")),
    Topic("Disco Elysium", "video game", ("ZA/UM", "2019", "Role-playing")),
    Topic("Outer Wilds", "video game", ("Mobius Digital", "2019", "Action-adventure")),
    Topic("Super Metroid", "video game", ("Nintendo", "1994", "Action-adventure")),
    Topic("Mass Effect 2", "video game", ("BioWare", "2010", "Action role-playing")),
    Topic("Chrono Trigger", "video game", ("Square", "1995", "Role-playing")),
    Topic("Kind of Blue", "album", ("Miles Davis", "1959", "Modal jazz")),
    Topic("OK Computer", "album", ("Radiohead", "1997", "Alternative rock")),
    Topic("Rumours (album)", "album", ("Fleetwood Mac", "1977", "Soft rock")),
    Topic("Abbey Road", "album", ("The Beatles", "1969", "Rock")),
    Topic("In Rainbows", "album", ("Radiohead", "2007", "Art rock")),
    Topic("Random Access Memories", "album", ("Daft Punk", "2013", "Disco")),
    Topic("The Dark Side of the Moon", "album", ("Pink Floyd", "1973", "Progressive rock")),
    Topic("Songs in the Key of Life", "album", ("Stevie Wonder", "1976", "Soul")),
    Topic("Hounds of Love", "album", ("Kate Bush", "1985", "Art pop")),
    Topic("Remain in Light", "album", ("Talking Heads", "1980", "New wave")),
    Topic("Europa (moon)", "astronomical object", ("Moon of Jupiter", "Solar System", "1610")),
    Topic("Titan (moon)", "astronomical object", ("Moon of Saturn", "Solar System", "1655")),
    Topic("Enceladus", "astronomical object", ("Moon of Saturn", "Solar System", "1789")),
    Topic("Andromeda Galaxy", "astronomical object", ("Spiral galaxy", "Andromeda constellation", "964")),
    Topic("Orion Nebula", "astronomical object", ("Diffuse nebula", "Orion constellation", "1610")),
    Topic("Crab Nebula", "astronomical object", ("Supernova remnant", "Taurus constellation", "1731")),
    Topic("Ancient Rome", "historical period", ("Mediterranean", "753 BC", "AD 476")),
    Topic("Ottoman Empire", "historical period", ("Anatolia and the Balkans", "1299", "1922")),
    Topic("Byzantine Empire", "historical period", ("Eastern Mediterranean", "330", "1453")),
    Topic("Hanseatic League", "historical period", ("Northern Europe", "1356", "1862")),
    Topic("Tang dynasty", "historical period", ("China", "618", "907")),
    Topic("Mali Empire", "historical period", ("West Africa", "1235", "1670")),
    Topic("Great Depression", "historical period", ("Worldwide", "1929", "1939")),
    Topic("Viking Age", "historical period", ("Scandinavia", "793", "1066")),
)

# The code host's project languages (`sites.gitlab.data.Project.language`) -> the article about each.
LANGUAGE_ARTICLES: dict[str, str] = {
    "Python": "Python (programming language)", "JavaScript": "JavaScript", "TypeScript": "TypeScript",
    "Go": "Go (programming language)", "Rust": "Rust (programming language)", "C": "C (programming language)",
    "C++": "C++", "HTML": "HTML", "CSS": "CSS", "Markdown": "Markdown", "Shell": "Bash (Unix shell)",
    "YAML": "YAML", "SQL": "SQL", "SCSS": "Sass (style sheet language)",
}
