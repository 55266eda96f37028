"""The `hloscope` command line: one module per command (typer only: parse arguments,
call the API, pick a formatter from hloscope.report, exit code); common.py holds the
load/cache/error wrapper they share."""

from __future__ import annotations

from typing import NoReturn


def run() -> NoReturn:
    """The console entry point (see hloscope._speed.process.run_command)."""
    import sys

    from hloscope._speed.process import allow_spawn, run_command
    from hloscope.cli.app import app_for
    from hloscope.cli.common import debugging

    def main() -> None:
        from hloscope.cli.lint import optional_dask_value

        sys.argv[1:] = optional_dask_value(sys.argv[1:])
        try:
            app_for(sys.argv[1:])()
        except Exception as e:  # noqa: BLE001 - a bug of ours: one line, not a traceback
            if debugging():
                raise
            print(f"error: internal error ({type(e).__name__}: {e}); rerun with --debug for "
                  "details", file=sys.stderr)
            sys.exit(2)

    allow_spawn()  # (our main module is guarded: workers may re-import it)
    from hloscope import cache

    cache.write_in_background()  # (the command exits next: it need not wait for the write)
    sys.exit(run_command(main))


__all__ = ["run"]
