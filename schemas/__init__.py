"""datasets.Features per config: the single source of truth for every table's schema."""
