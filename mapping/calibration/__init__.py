"""Calibration: measurement tables, fidelity, fitting cost parameters, honest validation
and LogCA parameters from measurements."""
