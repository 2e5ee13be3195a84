"""A module of the program whose values a compiled function reads."""
SCALE = 3.0
