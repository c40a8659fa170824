"""Dynamic fractional resource scheduling (DFRS): papers 000, 002 and 003 in ../shared/papers."""
