"""Plenum's exceptions. Every error of the library reaches Python as one of these (a panic in
the library included, as :class:`PlenumError`), never as a crash of the interpreter."""


class PlenumError(Exception):
    """Base class of Plenum's errors; also an internal error of the library (a bug)."""


class ModelError(PlenumError, ValueError):
    """An invalid model (or override): every problem, each with its position.

    Attributes: ``errors``, a list of :class:`plenum.Diagnostic` (``file``, ``line``,
    ``column``, ``key``, ``message``); ``file``, ``line``, ``column`` and ``key`` of the
    first. ``line`` is 0 where there is no position (an override, a model that cannot start).
    """

    errors = ()

    def _first(self, attr, default):
        return getattr(self.errors[0], attr) if self.errors else default

    @property
    def file(self):
        return self._first("file", "")

    @property
    def line(self):
        return self._first("line", 0)

    @property
    def column(self):
        return self._first("column", 0)

    @property
    def key(self):
        return self._first("key", "")


class SolverError(PlenumError, RuntimeError):
    """The integrator failed (too many steps, a step below the time axis's resolution, a
    Newton iteration that does not converge): ``time`` is the last good time; from
    :meth:`plenum.Model.run`, ``result`` holds the rows up to there."""

    time = float("nan")
    result = None


class CheckFailed(PlenumError, RuntimeError):
    """A run-time check stopped the run (docs/checks.md): ``code`` 1 (a projectile never
    exited by ``max_time``), 2 (negative mass), 3 (negative temperature) or 10 (a state that
    is not finite); ``time`` is where the state was kept; from :meth:`plenum.Model.run`,
    ``result`` holds the rows up to there."""

    code = 0
    time = float("nan")
    result = None


class StateError(PlenumError, ValueError):
    """A state blob that :meth:`plenum.Simulation.restore` refuses: of another model, another
    format version, truncated or damaged (its checksum). Nothing was changed."""
