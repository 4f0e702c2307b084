"""`triage site`: a static catalogue of the patterns and postmortems.

The builder reads the pattern library, the knowledge base and the search index, renders
pages from the templates in `site/`, refuses any page carrying a secret-looking string,
and writes the whole site at once. Modules, one job each:

- `html.py`: escaping, templates, relative links, slugs; `paths.py`: where each page lives
- `layout.py`: a page in the common layout, with the header comment naming its source
- `markdown.py`: the small, safe Markdown subset the knowledge base uses
- `content.py`: everything a page needs, gathered once (patterns, fixtures, stats, postmortems)
- `related.py`: similarity links precomputed from the embeddings in the DuckDB index
- `terms.py`: query-term expansions derived from the embedding model, for offline search
- `search_index.py`: the JSON search index the browser loads
- `pages.py`, `listings.py`: pattern and postmortem pages; index, area, tag and severity pages
- `guard.py`: the secret check every page passes before it is written
- `build.py`: the build, written atomically; `serve.py`: a local server on 127.0.0.1
- `commands.py`: what `triage site build|serve` do
"""
