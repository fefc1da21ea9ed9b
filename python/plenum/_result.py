"""The result of :meth:`plenum.Model.run`: every output at every output time, as NumPy arrays."""

import numpy as np


class Result:
    """Every output of one run at every output time (and at each projectile exit), as
    ``plenum run --csv`` writes them, bit for bit.

    ``result.time`` and ``result["tank.p"]`` are NumPy arrays; ``result.names`` lists the
    columns (``time`` first), ``result.units`` maps each to its SI unit; ``result.values`` is
    the whole table (rows × columns). ``rc`` is the run's final check code, ``messages`` the
    run-time checks that fired (with the time each first fired); ``stats`` the steps, rejected
    steps, right-hand sides, events, solve time and method; ``exit_time`` the projectile's exit
    time (``None`` without one). With ``[sensitivities]`` the columns ``d(<output>)/d(<p>)``
    are among the outputs (:meth:`sensitivity`).
    """

    def __init__(self, names, units, data, rows, rc, messages, stats, exit_time):
        self.names = list(names)
        self.units = dict(zip(self.names, units))
        table = np.frombuffer(data, dtype=np.float64).reshape(rows, len(self.names))
        table.flags.writeable = False
        self.values = table
        self._column = {n: i for i, n in enumerate(self.names)}
        self.rc = int(rc)
        self.messages = list(messages)
        self.stats = dict(stats)
        self.exit_time = exit_time

    @property
    def time(self):
        """Output times, s."""
        return self["time"]

    def __getitem__(self, name):
        try:
            return self.values[:, self._column[name]]
        except KeyError:
            raise KeyError(f"no output {name!r}; outputs: {', '.join(self.names)}") from None

    def __contains__(self, name):
        return name in self._column

    def __len__(self):
        return self.values.shape[0]

    def keys(self):
        return list(self.names)

    def sensitivity(self, output, parameter):
        """d(output)/d(parameter) over time (the model's ``[sensitivities] parameters``)."""
        return self[f"d({output})/d({parameter})"]

    def to_pandas(self):
        """The table as a pandas DataFrame indexed by time (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Result.to_pandas needs pandas: pip install pandas") from None
        df = pd.DataFrame(self.values[:, 1:], columns=self.names[1:],
                          index=pd.Index(self.values[:, 0], name="time"))
        df.attrs["units"] = dict(self.units)
        return df

    def __repr__(self):
        return (f"<plenum.Result: {len(self)} rows × {len(self.names)} columns, "
                f"t = {self.values[0, 0]!r} … {self.values[-1, 0]!r} s, rc {self.rc}>")
