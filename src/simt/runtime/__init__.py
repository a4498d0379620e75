"""simt package."""
