"""A report's options, declared once: the table, one check per type, and what is derived from them."""
