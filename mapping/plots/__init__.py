"""Plots of the field (matplotlib, Agg backend): PNG, SVG or PDF by the file extension."""
