"""`python -m hloscope`."""

from hloscope.cli import run

if __name__ == "__main__":
    run()
