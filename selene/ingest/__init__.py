"""Raw files to documents: readers, cleaning, language id, filters, exact dedup."""
