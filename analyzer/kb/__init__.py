"""The knowledge base: postmortems (kb/*.md), their index, search and suggestions."""
