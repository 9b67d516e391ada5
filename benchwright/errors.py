"""Errors that name the file and record at fault.

Every parser and check raises ``RecordError`` for bad input; the pipeline turns it
into a quarantine row (stage, locator, reason) instead of crashing the build.
"""


class BenchwrightError(Exception):
    """Base class for errors benchwright reports to the user."""


class RecordError(BenchwrightError):
    """One input record is bad. ``locator`` names the file (and the record inside it)."""

    def __init__(self, locator: str, reason: str):
        super().__init__(f"{locator}: {reason}")
        self.locator = locator
        self.reason = reason

    def __reduce__(self):  # pickled with both arguments (the default passes only the message)
        return type(self), (self.locator, self.reason), self.__dict__


class BuildError(BenchwrightError):
    """The build as a whole cannot be published (counts do not reconcile, too many bad records, ...)."""


class SourceError(BenchwrightError):
    """The source cannot be read at all (missing, empty, entirely unreadable)."""
