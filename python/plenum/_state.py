"""Unpickling: a model from its text and overrides, a simulation from its model and state."""


def model_from_parts(text, label, overrides):
    from plenum._plenum import Model

    return Model._from_parts(text, label, list(overrides))


def simulation_from_state(text, label, state):
    from plenum._plenum import Simulation

    return Simulation._from_state(text, label, state)
