"""How results are shown: the terminal (rich), Markdown and HTML report bundles, figures."""
