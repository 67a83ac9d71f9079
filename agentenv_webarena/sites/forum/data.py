"""The forum's seed vocabulary: forums, users, and the phrase banks posts and comments are drawn from.

Owns only static text; `seed` turns it into rows with a fixed `random.Random`. Kept apart so the
page modules hold routes and markup, not hundreds of lines of prose.
"""
from __future__ import annotations

__all__ = ["FORUMS", "USERS", "BIOS", "MODERATORS", "TITLE_BANKS", "BODY_BANKS", "GENERIC_BODY", "COMMENT_BANK",
           "LINK_HOSTS", "PRIMARY_USER"]

PRIMARY_USER = "MarvelsGrantMan136"

# name, title, description, sidebar, share of the posts (relative weight)
FORUMS: list[tuple[str, str, str, str, int]] = [
    ("AskReddit", "Ask Reddit", "The place to ask and answer thought-provoking questions.",
     "Questions only in the title. Be civil; no personal information.", 30),
    ("books", "Books", "A forum for readers: books, authors and reading habits.",
     "Spoilers must be marked. Self-promotion is limited to one post a month.", 28),
    ("gaming", "Gaming", "News, discussion and screenshots about video games.",
     "No piracy. Tag spoilers for recently released games.", 26),
    ("science", "Science", "Discussion of peer-reviewed research and scientific news.",
     "Link to the original study where possible. No pseudoscience.", 20),
    ("technology", "Technology", "News and discussion about the latest in technology.",
     "Submissions must be about technology. No tech support requests.", 24),
    ("movies", "Movies", "News and discussion about major motion pictures.",
     "Mark spoilers. Trailers go in the weekly thread.", 22),
    ("MachineLearning", "Machine Learning", "Research, projects and news about machine learning.",
     "Tag posts with [R] research, [P] project, [D] discussion or [N] news.", 16),
    ("personalfinance", "Personal Finance", "Budgeting, saving, investing, taxes and getting out of debt.",
     "No referral links. Be kind to people asking basic questions.", 20),
    ("history", "History", "Discussions about history and historical events.",
     "Nothing from the last 20 years. Cite sources for factual claims.", 14),
    ("space", "Space", "Space exploration, astronomy and astrophysics.",
     "Launch threads are pinned. Images must be credited.", 18),
    ("Music", "Music", "Talk about music: artists, albums, instruments and concerts.",
     "Song posts use the format 'Artist - Title'.", 16),
    ("food", "Food", "Cooking, recipes and food photos.",
     "Include a recipe when you post home-cooked food.", 18),
    ("DIY", "Do It Yourself", "Home improvement, repairs and maker projects.",
     "Safety first: mention electrical work and permits honestly.", 12),
    ("pittsburgh", "Pittsburgh", "Everything about the city of Pittsburgh and its neighborhoods.",
     "Local news, events and recommendations. Yinz be nice.", 12),
]

USERS: list[str] = [
    PRIMARY_USER, "bookworm_88", "QuantumQuokka", "pixel_pioneer", "LunaLovesLlamas", "Mysterious_Traveler",
    "SpaceCadet42", "RetroGamerX", "TheFrugalFox", "ByteSizedBeth", "HistoryHank", "chef_mario77",
    "MelodyMaker", "DIYDave", "SteelCityJen", "neural_nate", "ReelTalkRita", "FinanceFiona", "StargazerSam",
    "coffee_and_code", "WanderingWren", "Grumpy_Gardener", "NightOwlNora", "TechTina", "PlotTwistPete",
    "OrbitalOllie", "BudgetBarista", "LabRatLiz", "VinylVince", "CasualCritic",
]

# Biographies for some users (the rest have none); the primary user has one, as WebArena's account does.
BIOS: dict[str, str] = {
    PRIMARY_USER: "Marvel fan and weekend reader from Pittsburgh.",
    "bookworm_88": "Reading 80 books a year since 2015. Mostly sci-fi and history.",
    "QuantumQuokka": "Physics grad student. I like small animals and big equations.",
    "pixel_pioneer": "Indie game developer and retro console collector.",
    "SpaceCadet42": "Amateur astronomer with a 6-inch Dobsonian telescope.",
    "RetroGamerX": "If it has a cartridge, I have probably played it.",
    "TheFrugalFox": "Paid off 40k of student debt in three years. Ask me anything.",
    "HistoryHank": "Retired history teacher. Medieval Europe is my thing.",
    "chef_mario77": "Line cook by day, home baker by night.",
    "MelodyMaker": "Guitarist in a local band. Vinyl over streaming.",
    "DIYDave": "Weekend woodworker. Renovating a 1920s house one room at a time.",
    "SteelCityJen": "Born and raised in Pittsburgh. Go Steelers!",
    "neural_nate": "ML engineer working on recommendation systems.",
    "FinanceFiona": "CPA. Not your accountant, just here to help.",
    "StargazerSam": "Dark skies enthusiast and astrophotographer.",
    "LabRatLiz": "Molecular biologist. Pipettes are my love language.",
    "VinylVince": "Collector of jazz records from the fifties and sixties.",
    "TechTina": "Hardware reviewer and mechanical keyboard addict.",
    "OrbitalOllie": "Aerospace engineering student, rocket nerd.",
}

# Who moderates each forum (the rest have none); moderators may edit the forum (`/f/<forum>/edit`).
MODERATORS: dict[str, list[str]] = {
    "books": [PRIMARY_USER, "bookworm_88"], "pittsburgh": [PRIMARY_USER, "SteelCityJen"], "Music": [PRIMARY_USER],
    "gaming": ["RetroGamerX"], "science": ["LabRatLiz"], "space": ["StargazerSam", "OrbitalOllie"],
    "MachineLearning": ["neural_nate"], "personalfinance": ["FinanceFiona"], "history": ["HistoryHank"],
    "food": ["chef_mario77"], "DIY": ["DIYDave"], "technology": ["TechTina"],
}

# Title patterns per forum: "{x}" is filled from the forum's slot list.
TITLE_BANKS: dict[str, tuple[list[str], list[str]]] = {
    "AskReddit": ([
        "What is the best advice you have ever received about {x}?",
        "What is something about {x} that most people get wrong?",
        "People who changed their mind about {x}, what convinced you?",
        "What is your most unpopular opinion about {x}?",
        "What small thing about {x} makes you unreasonably happy?",
        "What would you tell your younger self about {x}?",
    ], ["money", "friendship", "moving to a new city", "working from home", "cooking", "travel", "sleep",
        "learning a language", "job interviews", "public transport", "pets", "growing older", "weddings",
        "first jobs", "social media", "the holidays"]),
    "books": ([
        "Just finished {x} and I can't stop thinking about it",
        "Is {x} worth reading in 2023?",
        "What should I read after {x}?",
        "Rereading {x} as an adult hits different",
        "Book club pick this month: {x}",
        "Underrated detail in {x} that nobody talks about",
    ], ["Dune", "The Left Hand of Darkness", "Pride and Prejudice", "The Name of the Wind", "Middlemarch",
        "Project Hail Mary", "The Count of Monte Cristo", "Piranesi", "Station Eleven", "The Remains of the Day",
        "Foundation", "Circe", "The Road", "Anna Karenina", "Neuromancer", "The Hobbit"]),
    "gaming": ([
        "Finally beat {x} after 80 hours",
        "Is {x} still worth playing today?",
        "{x} has the best soundtrack of any game",
        "Tips for a new player starting {x}?",
        "I can't believe how good the level design in {x} is",
        "Speedrunning {x}: my first sub-hour run",
    ], ["Hollow Knight", "The Witcher 3", "Stardew Valley", "Elden Ring", "Celeste", "Hades", "Portal 2",
        "Breath of the Wild", "Disco Elysium", "Factorio", "Outer Wilds", "Super Metroid", "Baldur's Gate 3",
        "Mass Effect 2", "Chrono Trigger"]),
    "science": ([
        "New study sheds light on {x}",
        "Researchers report a surprising result about {x}",
        "How close are we to understanding {x}?",
        "Large review finds little evidence for popular claims about {x}",
        "Explainer: what we actually know about {x}",
    ], ["sleep and memory", "deep sea microbes", "antibiotic resistance", "coral reef recovery",
        "the gut microbiome", "room-temperature superconductors", "bird migration", "microplastics",
        "dark matter", "plant communication", "ancient DNA", "honeybee navigation", "exercise and aging"]),
    "technology": ([
        "{x} is changing faster than anyone expected",
        "Why I stopped using {x}",
        "The hidden costs of {x}",
        "A beginner's guide to {x}",
        "Regulators are taking a closer look at {x}",
        "Is {x} overhyped?",
    ], ["smart home devices", "electric cars", "password managers", "foldable phones", "open source software",
        "cloud gaming", "mechanical keyboards", "right to repair", "satellite internet", "e-readers",
        "home solar batteries", "USB-C everything", "mesh Wi-Fi"]),
    "movies": ([
        "Just watched {x} for the first time",
        "{x} holds up surprisingly well",
        "The ending of {x} explained (spoilers)",
        "What is the best scene in {x}?",
        "Rewatching {x} and noticing new details",
    ], ["Alien", "Spirited Away", "The Godfather", "Arrival", "Mad Max: Fury Road", "Parasite", "Casablanca",
        "Jaws", "Everything Everywhere All at Once", "Heat", "The Thing", "Paddington 2", "Blade Runner",
        "Whiplash", "Amelie"]),
    "MachineLearning": ([
        "[D] How do you evaluate {x} in production?",
        "[P] I built a small library for {x}",
        "[R] A survey of recent work on {x}",
        "[D] Is {x} still worth learning?",
        "[N] Big lab releases new benchmark for {x}",
    ], ["retrieval augmented generation", "graph neural networks", "time series forecasting",
        "reinforcement learning from human feedback", "model distillation", "anomaly detection",
        "tabular data", "speech recognition", "diffusion models", "active learning", "federated learning"]),
    "personalfinance": ([
        "How much of my income should go to {x}?",
        "Finally paid off {x}!",
        "Confused about {x}, please help",
        "Is it smart to prioritize {x} in my twenties?",
        "Lessons learned from three years of {x}",
    ], ["an emergency fund", "my student loans", "a Roth IRA", "credit card debt", "index funds",
        "a down payment", "my car loan", "retirement savings", "a high-yield savings account",
        "budgeting apps", "a 401k match", "medical bills"]),
    "history": ([
        "What was daily life like in {x}?",
        "A forgotten episode from {x}",
        "Why did {x} end the way it did?",
        "Best books about {x}?",
        "Common myths about {x}",
    ], ["ancient Rome", "the Ottoman Empire", "medieval Iceland", "the Hanseatic League", "Tang dynasty China",
        "the Great Depression", "the Byzantine Empire", "Renaissance Florence", "the Mali Empire",
        "the Industrial Revolution", "Viking Age Scandinavia"]),
    "space": ([
        "Amazing new image of {x}",
        "What would it take to send a probe to {x}?",
        "My first astrophotography attempt: {x}",
        "New mission update about {x}",
        "How big is {x}, really?",
    ], ["the Orion Nebula", "Europa", "the Andromeda Galaxy", "Saturn's rings", "Betelgeuse", "Titan",
        "the Pillars of Creation", "Olympus Mons", "Enceladus", "the Crab Nebula", "Jupiter's Great Red Spot"]),
    "Music": ([
        "Albums like {x}?",
        "{x} still gives me chills",
        "Saw a live performance of {x} last night",
        "The production on {x} is incredible",
        "Underrated tracks on {x}",
    ], ["Kind of Blue", "OK Computer", "Rumours", "Abbey Road", "Blue Train", "In Rainbows",
        "Random Access Memories", "The Dark Side of the Moon", "Songs in the Key of Life", "Blonde",
        "Hounds of Love", "Remain in Light"]),
    "food": ([
        "My first attempt at {x}",
        "Foolproof recipe for {x}?",
        "[Homemade] {x}",
        "What am I doing wrong with {x}?",
        "Ten years of making {x}: my tips",
    ], ["sourdough bread", "ramen broth", "Neapolitan pizza", "croissants", "pierogies", "beef stew",
        "pad thai", "cinnamon rolls", "risotto", "fried chicken", "tamales", "macarons"]),
    "DIY": ([
        "Built {x} over the weekend",
        "Advice needed: {x}",
        "Before and after: {x}",
        "How I saved money on {x}",
    ], ["a floating bookshelf", "a deck railing", "a kitchen backsplash", "a raised garden bed",
        "a bathroom vanity", "a workbench", "a closet organizer", "a leaky faucet", "a fence gate"]),
    "pittsburgh": ([
        "Best place for {x} in Pittsburgh?",
        "Thoughts on {x}?",
        "PSA about {x}",
        "Moving here soon, what should I know about {x}?",
    ], ["pierogies", "the incline", "Squirrel Hill", "the Strip District", "parking downtown", "the T",
        "Lawrenceville", "the Three Rivers Heritage Trail", "sandwiches with fries in them", "Primanti Bros"]),
}

BODY_BANKS: dict[str, list[str]] = {
    "AskReddit": ["I have been wondering about this for a while.", "Curious to hear different perspectives.",
                  "Serious answers only, please.", "Mine is probably boring, but I will share it in the comments."],
    "books": ["The prose was beautiful and the ending surprised me.", "I went in blind and loved every chapter.",
              "The middle section dragged a little for me.", "I listened to the audiobook on my commute.",
              "No spoilers please, I am only halfway through."],
    "gaming": ["The combat took a while to click but now I am hooked.", "Played it on the Steam Deck.",
               "The art direction is stunning.", "I keep coming back to it every year."],
    "science": ["The paper was published in a peer-reviewed journal this week.",
                "The sample size is small, so take it with a grain of salt.",
                "The authors say replication is already under way."],
    "technology": ["I switched last year and have mixed feelings.", "Prices have come down a lot recently.",
                   "Privacy is my main concern here.", "Curious what everyone else is using."],
    "movies": ["The cinematography is gorgeous.", "The score carries the whole third act.",
               "Saw it in a theater with a great crowd.", "The practical effects still look amazing."],
    "MachineLearning": ["Code and data are linked in the paper.", "Looking for feedback on the approach.",
                        "Our baseline numbers were surprisingly strong.", "Happy to answer questions."],
    "personalfinance": ["I am 27 and make about 55k a year.", "We have no other debt besides this.",
                        "I put 10 percent of every paycheck aside.", "Would appreciate any advice."],
    "history": ["Primary sources are scarce, but the archaeology helps.", "I got curious after a documentary.",
                "The standard textbook account seems oversimplified."],
    "space": ["Taken with a small refractor from my backyard.", "The scale of it is hard to imagine.",
              "Launch is planned for next year."],
    "Music": ["It has been on repeat all week.", "The bass line on the second track is unreal.",
              "My dad played this record constantly when I was a kid."],
    "food": ["Recipe in the comments.", "It took three tries to get right.", "Used a cast iron pan.",
             "Family loved it."],
    "DIY": ["Total cost was about 120 dollars in materials.", "Took two weekends with basic tools.",
            "First time working with plywood."],
    "pittsburgh": ["Just moved to the area.", "Asking for a friend visiting next month.",
                   "Parking was a nightmare last time."],
}

GENERIC_BODY: list[str] = [
    "Any thoughts are welcome.", "Thanks in advance!", "Edit: thanks for all the replies.",
    "Long time lurker, first time poster.", "Let me know what you think.",
]

COMMENT_BANK: list[str] = [
    "Great post, thanks for sharing!", "I had the exact same experience.", "This is really helpful.",
    "Could you share more details?", "I respectfully disagree.", "Came here to say this.",
    "Saving this for later.", "Underrated comment right here.", "That is a fair point.",
    "I never thought about it that way.", "Source?", "This made my day.", "Same here, honestly.",
    "Counterpoint: it depends on the situation.", "Welcome to the club!", "Agreed, well said.",
    "I tried this and it worked for me.", "Not sure that is accurate.", "Thanks, I will look into it.",
    "This deserves more upvotes.", "Ha, this is so true.", "I learned something new today.",
    "Can confirm, it is great.", "Good luck with it!", "Love this.", "What a time to be alive.",
    "Interesting take.", "I had no idea.", "Following for updates.", "Totally agree with you.",
    "Happy to help if you have questions.", "That sounds frustrating.", "Nice work!",
    "I would start with the basics first.", "It gets better with practice.", "Have you tried the library?",
]

LINK_HOSTS: list[str] = ["https://www.example.com/articles", "https://news.example.org/story",
                         "https://blog.example.net/post"]
