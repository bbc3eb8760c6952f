"""``python -m advisor`` runs the command-line interface."""

from advisor.cli import run

if __name__ == "__main__":
    run()
