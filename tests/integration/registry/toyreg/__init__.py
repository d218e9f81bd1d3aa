"""A toy benchmark whose whole story is in this package: options, subcommand, case view and CI jobs."""
