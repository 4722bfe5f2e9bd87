"""extractor."""
