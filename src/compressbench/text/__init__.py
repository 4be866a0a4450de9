"""Text normalisation, tokenisation and JSON-object finding shared by several packages."""
