"""Page tests: one file per page of the app (a package, so its file names may repeat those in tests/unit/)."""
