"""Errors shared by every game. All are ``ValueError`` subclasses, so callers may catch either."""


class CardEnvsError(ValueError):
    """Base class of every error this package raises on bad input."""


class ConfigError(CardEnvsError):
    """An unknown configuration option, or a value of the wrong type or out of range."""


class DeckError(CardEnvsError):
    """A malformed stacked deck: unknown codes, duplicates, wrong size or composition."""


class IllegalActionError(CardEnvsError):
    """An action that is out of range or not legal in the current state. The state is unchanged."""


class StateError(CardEnvsError):
    """A call that the current state does not allow (e.g. acting after the game ended)."""
