"""WebArena's named forums, users and posts the base vocabulary (`data`) lacks, and the scale they bring.

Owns the forums WebArena's reddit tasks and evaluator URLs name that exist in its initial state (`news`,
`IAmA`, `deeplearning`, `EarthPorn`, ...; forums its tasks *create*, such as `cmu_lti`, are left out), a
few of its user names, the posts its URLs point at (under WebArena's ids, titled from their URL slugs:
names only, every body and comment is generated here) and `seed_entities`, which fills each forum with
generated posts, comments and votes (more than a page of 20 in most of them) using its own
`random.Random(ENTITY_SEED)`, after the base rows.

So that nothing the base data answers moves, the new rows stay out of the base data's way: they are in
the new forums only, by new users only (the primary user neither posts, comments, votes nor subscribes
there), and every post is dated before the base posts (2021-06 to 2022-10) with a modest score, so the
front page lists the base posts first in every sort the tasks use.
"""
from __future__ import annotations

import datetime as dt
import random
import sqlite3
from typing import NamedTuple

from agentenv_webarena.sites.forum import data
from agentenv_webarena.sites.forum.model import format_ts

__all__ = ["ENTITY_SEED", "EntityForum", "ENTITY_FORUMS", "ENTITY_USERS", "NAMED_POSTS", "NAMED_COMMENTS",
           "seed_entities"]

ENTITY_SEED = 8089
_START = dt.datetime(2021, 6, 1, 8, 0, 0)
_SPAN_S = 500 * 86400  # to mid-October 2022, before the base posts (January 2023 on)


class EntityForum(NamedTuple):
    """A forum and what its generated posts talk about (`subjects` fill `_TITLE_PATTERNS`)."""

    name: str
    title: str
    description: str
    posts: int
    subjects: tuple[str, ...]


ENTITY_FORUMS: list[EntityForum] = [
    EntityForum("news", "News", "World and national news.", 48,
                ("the city council", "the state budget", "a court ruling", "the election", "a new law",
                 "the governor", "minimum wage", "a bankruptcy filing")),
    EntityForum("IAmA", "I Am A", "Ask me anything: interviews with people about their work and lives.", 40,
                ("a marine biologist", "a PhD student", "a firefighter", "a museum curator", "a nurse",
                 "a game designer", "a lecturer in biotechnology", "a long-distance hiker")),
    EntityForum("deeplearning", "Deep Learning", "Neural networks: papers, code and questions.", 36,
                ("transformers", "diffusion models", "LLaMA weights", "GPU memory", "fine-tuning",
                 "batch normalization", "learning-rate schedules")),
    EntityForum("EarthPorn", "Earth Porn", "Pictures of natural landscapes.", 34,
                ("a mountain lake", "the desert at dawn", "a river canyon", "autumn forests", "a glacier",
                 "a waterfall", "the coast in fog")),
    EntityForum("television", "Television", "News and discussion about TV shows.", 32,
                ("season 2", "the finale", "a renewal", "the new cast", "a streaming premiere", "the pilot")),
    EntityForum("funny", "Funny", "Things that made you laugh.", 30,
                ("my cat", "a sign at the store", "my dad's texts", "autocorrect", "a meeting invite")),
    EntityForum("nyc", "New York City", "News and talk about New York City.", 28,
                ("the subway", "rent prices", "a bodega", "Central Park", "a street fair", "the ferry")),
    EntityForum("relationship_advice", "Relationship Advice", "Advice on relationships of every kind.", 28,
                ("my roommate", "my partner's family", "a long-distance move", "a wedding invite",
                 "an old friend")),
    EntityForum("singularity", "Singularity", "Artificial intelligence and the future of technology.", 26,
                ("AGI timelines", "chatbots", "robotics", "automation", "compute scaling")),
    EntityForum("sports", "Sports", "Sports news and discussion.", 26,
                ("the World Cup", "the playoffs", "a trade deadline", "a record-breaking run", "a coach")),
    EntityForum("wallstreetbets", "Wall Street Bets", "Markets, options and questionable decisions.", 24,
                ("interest rates", "earnings reports", "index funds", "call options", "the Fed")),
    EntityForum("Futurology", "Futurology", "Future developments in science and technology.", 22,
                ("fusion power", "lab-grown meat", "self-driving cars", "space elevators", "AI safety")),
    EntityForum("explainlikeimfive", "Explain Like I'm Five", "Simple explanations of complex questions.", 22,
                ("static electricity", "inflation", "jet lag", "noise-cancelling headphones", "tides")),
    EntityForum("gadgets", "Gadgets", "Consumer electronics and gadgets.", 20,
                ("a retro gaming PC", "e-readers", "smart watches", "a mechanical keyboard", "USB-C hubs")),
    EntityForum("UpliftingNews", "Uplifting News", "Good news from around the world.", 20,
                ("a rescued dog", "a community garden", "a scholarship", "a new law", "volunteers")),
    EntityForum("videos", "Videos", "Videos worth watching.", 20,
                ("a rescue team", "a street performer", "a time-lapse", "a cooking fail")),
    EntityForum("LifeProTips", "Life Pro Tips", "Tips that make life better.", 18,
                ("saving money", "cleaning", "job interviews", "travel", "sleep")),
    EntityForum("BuyItForLife", "Buy It For Life", "Durable, practical products that last.", 16,
                ("cast iron pans", "boots", "backpacks", "a wool blanket", "kitchen knives")),
    EntityForum("headphones", "Headphones", "Headphones, earbuds and amplifiers.", 16,
                ("open-back headphones", "earbuds", "a DAC", "noise cancelling", "ear pads")),
    EntityForum("iphone", "iPhone", "Everything about the iPhone.", 16,
                ("battery life", "the camera", "iOS updates", "cases", "the charger")),
    EntityForum("consoles", "Consoles", "Game consoles old and new.", 14,
                ("the Switch", "a retro console", "controllers", "storage upgrades")),
    EntityForum("games", "Games", "Video game discussion.", 14,
                ("an indie game", "speedruns", "a sequel", "co-op games")),
    EntityForum("aww", "Aww", "Things that are cute and cuddly.", 14,
                ("a puppy", "a kitten", "ducklings", "a sleepy otter")),
    EntityForum("dataisbeautiful", "Data Is Beautiful", "Visualizations of data.", 12,
                ("rent prices", "commute times", "baby names", "global temperatures")),
    EntityForum("memes", "Memes", "Memes of every kind.", 12, ("Mondays", "group projects", "the office printer")),
    EntityForum("pics", "Pics", "Pictures and images.", 12, ("an old photo", "a sunset", "a city street")),
    EntityForum("Karaoke", "Karaoke", "Singing, machines and song choices.", 10,
                ("a karaoke machine", "duet songs", "microphones")),
    EntityForum("massachusetts", "Massachusetts", "News and talk about Massachusetts.", 10,
                ("Boston traffic", "the Cape", "snow days", "the T")),
    EntityForum("washington", "Washington", "News and talk about Washington state.", 10,
                ("Seattle rain", "ferries", "hiking trails")),
    EntityForum("washingtondc", "Washington DC", "News and talk about Washington, DC.", 10,
                ("the Metro", "museums", "cherry blossoms")),
]

ENTITY_USERS: list[str] = [
    "Hrekires", "AdamCannon", "CameronKelsey", "Don_Gato1", "FTorrez81", "PatientBuilder499", "RickyDontLoseThat",
    "ThetaGang_wsb", "UniversityofBath", "jacyanthis", "sirbarani", "Harper_Lane", "mountain_miles", "quiet_quasar",
    "dmv_local", "bay_state_bob", "nyc_nomad", "tensor_tom", "gpu_grace", "trail_tess",
]

# (forum, WebArena's post id, its URL slug): posts WebArena's URLs point at, titled from the slug. Only those in
# the new forums: its posts in the base forums (books 59421, technology 134696, ...) would change the base
# forums' submission counts, which existing tasks answer ("which forum has the most submissions").
NAMED_POSTS: list[tuple[str, int, str]] = [
    ("EarthPorn", 98256, "i-can-t-wait-for-all-this-green-to-start-coming-back-little"),
    ("EarthPorn", 98297, "2-years-later-this-is-still-one-of-the-most-incredible"),
    ("EarthPorn", 98332, "my-favorite-place-on-the-planet-henry-s-fork-of-the-snake"),
    ("Futurology", 119517, "openai-ceo-it-s-not-funny-that-i-m-afraid-of-the-ai-we-re"),
    ("IAmA", 119714, "i-m-ellie-jarvis-she-her-a-2nd-year-phd-student-in-the"),
    ("IAmA", 119719, "hello-reddit-i-m-nazia-mehrban-a-lecturer-in-biotechnology"),
    ("IAmA", 119742, "hi-i-m-vienne-a-doctoral-student-at-the-university-of-bath-i"),
    ("IAmA", 13170, "hello-i-m-dr-sara-fontani-from-the-university-of"),
    ("IAmA", 13175, "hi-i-m-kit-yates-i-m-a-mathematical-biologist-at-the"),
    ("IAmA", 34032, "we-re-sandhya-moise-david-phillips-and-chan-lee-from-the"),
    ("IAmA", 55142, "we-re-sadeka-nujhat-hannah-leese-and-sandhya-moise-from-the"),
    ("IAmA", 55155, "hi-i-m-dr-lucy-maddox-from-bath-university-uk-i-m-a-clinical"),
    ("UpliftingNews", 16087, "same-sex-marriage-is-now-legal-in-all-of-mexico-s-states"),
    ("deeplearning", 124993, "meta-s-llama-weights-leaked-on-torrent-and-the-best-thing"),
    ("explainlikeimfive", 39244, "eli5-how-does-pinching-a-ribbon-and-sliding-your-finger"),
    ("gadgets", 19459, "a-custom-gaming-pc-built-inside-a-vintage-1940s-motorola"),
    ("massachusetts", 84954, "the-last-of-lincoln"),
    ("news", 129508, "tennessee-governor-oks-bill-to-cut-nashville-council-in-half"),
    ("news", 129594, "arizona-gov-katie-hobbs-refuses-to-proceed-with-execution"),
    ("news", 129783, "don-t-say-gay-lawmaker-pleads-guilty-to-covid-relief-fraud"),
    ("news", 129794, "judge-halts-wyoming-abortion-ban-days-after-it-took-effect"),
    ("news", 129808, "disney-world-deal-with-union-will-raise-minimum-wage-to-18"),
    ("news", 129816, "gov-whitmer-signs-bills-to-repeal-right-to-work-restore"),
    ("news", 43558, "kansas-gov-laura-kelly-wins-re-election-defeating-gop"),
    ("news", 43572, "sec-doj-investigating-crypto-platform-ftx"),
    ("news", 43781, "crypto-giant-ftx-to-file-for-bankruptcy-ceo-sam-bankman"),
    ("news", 43839, "philadelphia-da-larry-krasner-impeached-by-pa-house"),
    ("nyc", 44650, "fox-news-hosts-cast-new-york-as-crime-ridden-and-chaotic"),
    ("singularity", 69404, "the-singularity-is-a-matter-of-when-not-if"),
    ("sports", 48303, "iran-football-legend-daei-will-not-attend-world-cup-amid"),
    ("television", 134868, "the-night-agent-renewed-for-season-2-at-netflix"),
    ("television", 135152, "lord-of-the-rings-the-rings-of-power-season-2-cast-adds"),
    ("television", 135156, "ted-lasso-season-3-premiere-scores-870k-u-s-households-up-59"),
    ("television", 135201, "star-trek-starfleet-academy-series-from-alex-kurtzman-and"),
    ("videos", 115139, "hundreds-of-civilian-turkish-volunteers-waiting-to-be-sent"),
    ("wallstreetbets", 29458, "how-much-will-the-federal-reserve-raise-interest-rates-in"),
    ("wallstreetbets", 29478, "how-will-airbnb-close-following-their-earnings-report-on"),
]

# (WebArena's comment id, the id of the named post it is on)
NAMED_COMMENTS: list[tuple[int, int]] = [(1042264, 69404)]

_TITLE_PATTERNS = (
    "What do you think about {s}?", "A question about {s}", "My experience with {s}", "Thoughts on {s}",
    "{S} this week", "Finally tried {s}", "Is it just me, or is {s} overrated?", "Update on {s}",
    "Looking for advice about {s}", "Today I learned something about {s}", "{S}: a short story",
    "Unpopular opinion about {s}", "Can anyone recommend something about {s}?", "News about {s}",
)
_BODIES = (
    "Curious what everyone here thinks.", "Posting this because it came up at work today.",
    "Long-time lurker, first post.", "Photos and details in the comments.", "Any advice is welcome.",
    "I will update this post if anything changes.", "Sources are linked below.",
)


def title_from_slug(slug: str) -> str:
    """A post title from its URL slug: the words, the first one capitalised."""
    text = slug.replace("-", " ")
    return text[:1].upper() + text[1:]


def seed_entities(conn: sqlite3.Connection) -> None:
    """Insert the named forums, users, posts and comments and the generated posts, comments and votes that fill
    the forums, with `random.Random(ENTITY_SEED)`, after the base rows."""
    rng = random.Random(ENTITY_SEED)
    first_user = conn.execute("SELECT MAX(id) FROM forum_users").fetchone()[0] + 1
    users = []
    for i, name in enumerate(ENTITY_USERS):
        conn.execute("INSERT INTO forum_users (id, username, password, biography, created_at) VALUES (?,?,?,?,?)",
                     (first_user + i, name, "test1234", "", format_ts(_START - dt.timedelta(days=40 + 7 * i))))
        users.append(first_user + i)
    forum_ids = {}
    for k, f in enumerate(ENTITY_FORUMS):
        forum_ids[f.name] = conn.execute(
            "INSERT INTO forum_forums (name, title, description, sidebar, created_at) VALUES (?,?,?,?,?)",
            (f.name, f.title, f.description, "Be civil. Stay on topic. No spam.",
             format_ts(_START - dt.timedelta(days=200 - 5 * k)))).lastrowid
        for uid in rng.sample(users, 2):
            conn.execute("INSERT INTO forum_moderators (forum_id, user_id) VALUES (?,?)", (forum_ids[f.name], uid))
    posts = []  # (id or None, forum, title, created)
    seen = {r[0].lower() for r in conn.execute("SELECT title FROM forum_submissions")}  # tasks name posts by title
    seen |= {title_from_slug(slug).lower() for _, _, slug in NAMED_POSTS}
    for f in ENTITY_FORUMS:
        titles = sorted({p.format(s=s, S=s[:1].upper() + s[1:]) for s in f.subjects for p in _TITLE_PATTERNS})
        rng.shuffle(titles)
        titles = [t for t in titles if t.lower() not in seen][:f.posts]
        seen |= {t.lower() for t in titles}
        posts += [(None, f.name, t, _START + dt.timedelta(seconds=rng.randrange(_SPAN_S))) for t in titles]
    for forum, pid, slug in NAMED_POSTS:
        posts.append((pid, forum, title_from_slug(slug), _START + dt.timedelta(seconds=rng.randrange(_SPAN_S))))
    named_comments = {post: cid for cid, post in NAMED_COMMENTS}
    for pid, forum, title, created in posts:
        author = rng.choice(users)
        body = " ".join(rng.sample(_BODIES, rng.choice((0, 1, 2))))
        sid = conn.execute("INSERT INTO forum_submissions (id, forum_id, user_id, title, url, body, created_at) "
                           "VALUES (?,?,?,?,?,?,?)", (pid, forum_ids[forum], author, title, "", body,
                                                      format_ts(created))).lastrowid
        conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,1)", (author, sid))
        for uid in rng.sample([u for u in users if u != author], rng.randint(0, 8)):
            conn.execute("INSERT INTO forum_submission_votes VALUES (?,?,?)", (uid, sid, 1 if rng.random() < 0.7
                                                                               else -1))
        _comments(conn, rng, sid, created, users, named_comments.get(sid))
    for uid in users:
        for fid in rng.sample(sorted(forum_ids.values()), 3):
            conn.execute("INSERT INTO forum_subscriptions VALUES (?,?)", (uid, fid))


def _comments(conn: sqlite3.Connection, rng: random.Random, sid: int, created: dt.datetime, users: list[int],
              named_id: int | None) -> None:
    """A few comments on post `sid` (the first under WebArena's id `named_id` when given), each up-voted by its
    author."""
    at = created
    parent = None
    for k in range(rng.choice((0, 1, 2, 3, 5) if named_id is None else (2, 3))):
        at = at + dt.timedelta(minutes=rng.randint(5, 900))
        author = rng.choice(users)
        cid = conn.execute("INSERT INTO forum_comments (id, submission_id, parent_id, user_id, body, created_at) "
                           "VALUES (?,?,?,?,?,?)", (named_id if k == 0 else None, sid,
                                                    parent if rng.random() < 0.3 else None, author,
                                                    rng.choice(data.COMMENT_BANK), format_ts(at))).lastrowid
        conn.execute("INSERT INTO forum_comment_votes VALUES (?,?,1)", (author, cid))
        parent = cid
