"""``python -m advisor`` runs the command-line interface."""

from advisor.cli import main

if __name__ == "__main__":
    main()
