"""The one exception type the CLI turns into a clean one-line error."""


class EvalsError(Exception):
    """A problem the user can fix: bad input, a missing dependency, a bad flag.

    Core code raises it with a message that names the file, field or setting;
    the CLI prints the message and exits non-zero, never a traceback.
    """
