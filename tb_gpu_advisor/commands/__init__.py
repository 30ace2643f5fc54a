"""Subcommands beyond `analyze`, each registering itself on the CLI's subparsers."""
