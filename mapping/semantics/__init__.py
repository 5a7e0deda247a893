"""What a mapping means, stated once: the bound problem, routes, memory traffic, the
metric rules and the aggregations that every evaluator, the search and fitting read."""
