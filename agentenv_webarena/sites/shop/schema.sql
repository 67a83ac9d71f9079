-- The embedded shop's tables (`shop_*`); the admin side (`shop.admin`) uses them too.
CREATE TABLE shop_categories (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE, position INTEGER NOT NULL);
CREATE TABLE shop_products (
    id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE,
    price REAL NOT NULL, description TEXT NOT NULL, category_id INTEGER NOT NULL REFERENCES shop_categories(id),
    sizes TEXT NOT NULL DEFAULT '', colors TEXT NOT NULL DEFAULT '', qty INTEGER NOT NULL DEFAULT 0,
    enabled INTEGER NOT NULL DEFAULT 1, position INTEGER NOT NULL DEFAULT 0);
CREATE TABLE shop_customers (
    id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_addresses (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES shop_customers(id), firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, street TEXT NOT NULL, city TEXT NOT NULL, region TEXT NOT NULL, postcode TEXT NOT NULL,
    country TEXT NOT NULL, telephone TEXT NOT NULL, is_default INTEGER NOT NULL DEFAULT 0);
CREATE TABLE shop_sessions (
    token TEXT PRIMARY KEY, customer_id INTEGER REFERENCES shop_customers(id), flash TEXT NOT NULL DEFAULT '',
    flash_kind TEXT NOT NULL DEFAULT 'success', last_order_id INTEGER);
CREATE TABLE shop_carts (
    id INTEGER PRIMARY KEY, customer_id INTEGER UNIQUE REFERENCES shop_customers(id), session_token TEXT UNIQUE);
CREATE TABLE shop_cart_items (
    id INTEGER PRIMARY KEY, cart_id INTEGER NOT NULL REFERENCES shop_carts(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), qty INTEGER NOT NULL,
    size TEXT NOT NULL DEFAULT '', color TEXT NOT NULL DEFAULT '');
CREATE TABLE shop_orders (
    id INTEGER PRIMARY KEY, increment_id TEXT NOT NULL UNIQUE,
    customer_id INTEGER NOT NULL REFERENCES shop_customers(id),
    status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, subtotal REAL NOT NULL,
    shipping REAL NOT NULL, grand_total REAL NOT NULL, ship_firstname TEXT NOT NULL, ship_lastname TEXT NOT NULL,
    ship_street TEXT NOT NULL, ship_city TEXT NOT NULL, ship_region TEXT NOT NULL, ship_postcode TEXT NOT NULL,
    ship_country TEXT NOT NULL, ship_telephone TEXT NOT NULL, payment_method TEXT NOT NULL);
CREATE TABLE shop_order_items (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES shop_orders(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), sku TEXT NOT NULL, name TEXT NOT NULL,
    price REAL NOT NULL, qty INTEGER NOT NULL, size TEXT NOT NULL DEFAULT '', color TEXT NOT NULL DEFAULT '');
CREATE TABLE shop_order_comments (
    id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES shop_orders(id), comment TEXT NOT NULL,
    status TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_reviews (
    id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES shop_products(id),
    customer_id INTEGER REFERENCES shop_customers(id), nickname TEXT NOT NULL, title TEXT NOT NULL,
    detail TEXT NOT NULL, rating_percent INTEGER NOT NULL, status TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_wishlist (
    id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES shop_customers(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), added_at TEXT NOT NULL);
CREATE TABLE shop_admin_users (
    id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE, password_hash TEXT NOT NULL, firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, email TEXT NOT NULL);
CREATE TABLE shop_admin_sessions (
    token TEXT PRIMARY KEY, admin_id INTEGER NOT NULL REFERENCES shop_admin_users(id), flash TEXT NOT NULL DEFAULT '',
    flash_kind TEXT NOT NULL DEFAULT 'success');
CREATE TABLE shop_admin_tokens (
    token TEXT PRIMARY KEY, admin_id INTEGER NOT NULL REFERENCES shop_admin_users(id));
CREATE TABLE shop_subcategories (
    id INTEGER PRIMARY KEY, category_id INTEGER NOT NULL REFERENCES shop_categories(id),
    parent_id INTEGER REFERENCES shop_subcategories(id), name TEXT NOT NULL, url_path TEXT NOT NULL UNIQUE,
    position INTEGER NOT NULL);
CREATE TABLE shop_subcategory_products (
    subcategory_id INTEGER NOT NULL REFERENCES shop_subcategories(id),
    product_id INTEGER NOT NULL REFERENCES shop_products(id), PRIMARY KEY (subcategory_id, product_id));
CREATE TABLE shop_contact_messages (
    id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES shop_customers(id), name TEXT NOT NULL,
    email TEXT NOT NULL, telephone TEXT NOT NULL DEFAULT '', comment TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE shop_newsletter_subscribers (
    customer_id INTEGER PRIMARY KEY REFERENCES shop_customers(id), subscribed INTEGER NOT NULL,
    changed_at TEXT NOT NULL);
CREATE INDEX shop_reviews_product ON shop_reviews(product_id);
CREATE INDEX shop_order_items_order ON shop_order_items(order_id);
CREATE INDEX shop_orders_customer ON shop_orders(customer_id);
CREATE INDEX shop_subcategory_products_product ON shop_subcategory_products(product_id);
-- The admin side's own state: stock status and the "sale" flag of a product (Magento attributes), content
-- pages (CMS) and cart price rules.
ALTER TABLE shop_products ADD COLUMN stock_status INTEGER NOT NULL DEFAULT 1;
ALTER TABLE shop_products ADD COLUMN sale INTEGER NOT NULL DEFAULT 0;
CREATE TABLE shop_cms_pages (
    id INTEGER PRIMARY KEY, title TEXT NOT NULL, identifier TEXT NOT NULL UNIQUE, content_heading TEXT NOT NULL,
    content TEXT NOT NULL, is_active INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE shop_sales_rules (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL DEFAULT '',
    is_active INTEGER NOT NULL DEFAULT 1, website_ids TEXT NOT NULL, customer_group_ids TEXT NOT NULL,
    coupon_code TEXT NOT NULL DEFAULT '', from_date TEXT NOT NULL DEFAULT '', to_date TEXT NOT NULL DEFAULT '',
    priority INTEGER NOT NULL DEFAULT 0, simple_action TEXT NOT NULL, discount_amount REAL NOT NULL);
-- Later admin families: a product's special price (Advanced Pricing; dates 'YYYY-MM-DD', '' = open), the
-- storefront's search terms (Marketing > SEO & Search > Search Terms) and an order's billing address when it was
-- edited apart from the shipping one (an order without a row bills to its shipping address).
ALTER TABLE shop_products ADD COLUMN special_price REAL;
ALTER TABLE shop_products ADD COLUMN special_from TEXT NOT NULL DEFAULT '';
ALTER TABLE shop_products ADD COLUMN special_to TEXT NOT NULL DEFAULT '';
CREATE TABLE shop_search_terms (
    id INTEGER PRIMARY KEY, query_text TEXT NOT NULL UNIQUE, num_results INTEGER NOT NULL,
    popularity INTEGER NOT NULL, redirect TEXT NOT NULL DEFAULT '', display_in_terms INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL);
CREATE TABLE shop_order_billing (
    order_id INTEGER PRIMARY KEY REFERENCES shop_orders(id), firstname TEXT NOT NULL, lastname TEXT NOT NULL,
    street TEXT NOT NULL, city TEXT NOT NULL, region TEXT NOT NULL, postcode TEXT NOT NULL, country TEXT NOT NULL,
    telephone TEXT NOT NULL);
-- WebArena's catalog entities (`entities`): whether the storefront's category bar lists a top category (Magento's
-- "Include in Menu") and where a product is listed (Magento's visibility: 1 not individually, 2 catalog, 3 search,
-- 4 catalog and search).
ALTER TABLE shop_categories ADD COLUMN include_in_menu INTEGER NOT NULL DEFAULT 1;
ALTER TABLE shop_products ADD COLUMN visibility INTEGER NOT NULL DEFAULT 4;
