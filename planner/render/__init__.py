"""Words and layouts for people: the CLI and the app word the engine's numbers and codes here."""
