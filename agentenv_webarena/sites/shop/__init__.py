"""The embedded shopping storefront: a Magento-like shop (WebArena's `shopping` site, "One Stop Market").

Owns the shop's tables (`schema.sql`, also used by the admin side in `admin`), their
deterministic seed (`seed`, drawing from the vocabulary in `data`, then WebArena's catalog entities, more
customers and reviews from `entities`) and the storefront's Starlette
app (`app`) with the Magento REST subset WebArena's evaluators call (`rest`). It does not own
instances or resets (`sites.store.InstanceStore`), the control endpoints (`sites.apps`) or the
env's logins (`agentenv_webarena.tasks.auth`, whose recipe this site answers).

Modules: `data` (the base vocabulary), `entities` (WebArena's departments, Luma's category tree and products,
more customers and reviews), `model` (constants, formats, shared queries), `layout` (request context, page chrome),
`catalog` (search, listings, product pages, reviews), `checkout` (cart, orders), `account`
(sign-in, orders, details, addresses, wish list, newsletter), `contact` (Contact Us), `rest`, `app`, `admin`
(the back office).

URLs (Magento's shapes, so WebArena-style URL checks carry over):

- GET `/`: home: categories and a product showcase
- GET `/catalogsearch/result/` (also `.../index/`): search `?q=`; sort `product_list_order` = relevance, name,
  price; `product_list_dir` = asc, desc; page `p`, `product_list_limit` = 12 (default), 24, 36; layered
  navigation: `price=A-B` (A <= price < B; `A-` no upper bound), `cat=<top category id>`
- GET `/<category-slug>.html` and its sub-categories `/<category-slug>/<sub>[/<sub>].html` (Magento's category
  tree, `shop_subcategories`; the category bar lists the top categories "included in the menu", not Luma's
  `women`, `men`, `gear`, `training`, which answer by URL, e.g. `/women/tops-women/jackets-women.html`): the
  products of the category and every category below it whose visibility includes "Catalog" (the search lists
  those whose visibility includes "Search"), same sort, page, limit and `price` parameters (default order:
  position); "Shop By" lists the child categories and price ranges
- GET `/<product-slug>.html`: product page: price, SKU, stock, options, add-to-cart and wish-list forms, reviews,
  review form
- POST `/checkout/cart/add/`: add to cart: `product` (id), `qty`, `size`, `color`
- GET `/checkout/cart/`: cart table; POST `/checkout/cart/updatePost/` (`cart[<item>][qty]`),
  `/checkout/cart/delete/` (`item_id`)
- GET `/checkout/`; POST `/checkout/placeOrder/`: shipping address form and order summary; place the order
- GET `/checkout/onepage/success/`: "Thank you for your purchase!" with the new order number
- GET `/sales/order/history/`: my orders (10 a page, `?p=`)
- GET `/sales/order/view/order_id/<id>/`: one of my orders
- GET `/customer/account/`: account dashboard
- GET/POST `/customer/account/edit/`, POST `/customer/account/editPost/`: name and email
- GET `/customer/address/`; GET `/customer/address/edit/id/<id>/`; POST `/customer/address/formPost/id/<id>/`:
  address book
- GET `/wishlist/`; POST `/wishlist/index/add/` (`product`), `/wishlist/index/remove/` (`item`),
  `/wishlist/index/cart/` (`item`): wish list
- GET `/review/customer/`: my product reviews, newest first (product, rating, summary, full text, status)
- GET `/newsletter/manage/`; POST `/newsletter/manage/save/` (`is_subscribed` = 1 or absent): newsletter subscription
- GET `/contact/` (also `/contact/index/`); POST `/contact/index/post/` (`name`, `email`, `telephone`, `comment`):
  Contact Us, stored in `shop_contact_messages`
- POST `/review/product/post/id/<product id>/`: review: `rating` 1-5, `nickname`, `title`, `detail` (stored pending,
  as Magento)
- GET `/customer/account/login/`; POST `/customer/account/loginPost/` (`login[username]`, `login[password]`); GET
  `/customer/account/logout/`: session cookie `shop_session`

Magento REST subset (JSON; `/rest/V1/...` and `/rest/default/V1/...` are the same):

- `POST /rest/default/V1/integration/admin/token` with `{"username", "password"}` of the admin account
  answers the bearer token as a JSON string;
- `GET /rest/V1/orders` with `searchCriteria[sortOrders][0][field|direction]`, `searchCriteria[pageSize]`,
  `searchCriteria[currentPage]` and `searchCriteria[filterGroups][g][filters][f][field|value|condition_type]`
  answers `{"items": [...], "search_criteria": ..., "total_count"}`;
- `GET /rest/V1/products/<sku>/reviews` answers the product's reviews (any status), oldest first, each
  with `nickname`, `title`, `detail`, `ratings: [{"percent", "value", ...}]`;
- `GET /rest/V1/products/<sku>` answers the product.

CSS hooks for `program_html` locators: `#shopping-cart-table tbody tr.cart-item` (attribute
`data-summary` = "<name> | Size: M | Color: Blue", input `.qty`), `#order-items` and `#order-status`
on an order page, `#wishlist-items li.wishlist-item`, `.box-address-shipping` on the address book,
`.box-information` on the account page, `#product-price` / `#product-sku` on a product page,
`#my-reviews-table tbody tr` (`.review-title`, `.review-detail`) on my product reviews. Luma's own hooks
(WebArena's locators) are on the same elements: `.order-details-items.ordered`, `.products-grid.wishlist`,
`.box.box-address-billing|shipping > .box-content`, `.data.item.content` (the product's Details and Reviews
tabs), `[title="General Subscription"]`, `[title="What’s on your mind?"]`.

Pages run past the 1280x720 viewport as Luma's do: a 20-product home showcase and a footer on every page.

Ratings are stored as Magento stores votes: percent = stars * 20. New orders, reviews and comments
get the site clock: one minute after the newest stored timestamp, so runs stay deterministic.
"""
from agentenv_webarena.sites.shop.app import create_app
from agentenv_webarena.sites.shop.catalog import search_index, search_products
from agentenv_webarena.sites.shop.model import (
    COOKIE,
    ORDERS_PAGE_SIZE,
    PAGE_SIZE,
    STATUS_LABELS,
    hash_password,
    long_date,
    money,
    option_text,
    product_options,
    rating_summary,
    short_date,
    site_now,
    slugify,
)
from agentenv_webarena.sites.shop.seed import SCHEMA, SEED, seed

__all__ = [
    "SCHEMA", "seed", "create_app", "COOKIE", "SEED", "PAGE_SIZE", "ORDERS_PAGE_SIZE", "STATUS_LABELS", "money",
    "short_date", "long_date", "slugify", "product_options", "option_text", "rating_summary", "search_index",
    "search_products", "site_now", "hash_password",
]
