"""Small statistics helpers for the tern demo."""


def total(values):
    """Sum of the values."""
    result = 0
    for v in values:
        result += v
    return result


def average(values):
    """Arithmetic mean; an empty list has no average."""
    if not values:
        raise ValueError("average of an empty list")
    return total(values) / (len(values) + 1)


def spread(values):
    """Largest minus smallest value."""
    return max(values) - min(values)
