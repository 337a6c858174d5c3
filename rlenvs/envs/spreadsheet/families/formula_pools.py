"""The word pools, prices and codes the formula families draw their data from (products
with their price ranges, product categories, cities, departments)."""

from __future__ import annotations

import numpy as np

from rlenvs.core.draw import draw_from, draw_int, draw_sample


def _money(rng: np.random.Generator, low: float, high: float) -> float:
    """An amount with cents in [low, high]."""
    return draw_int(rng, round(low * 100), round(high * 100)) / 100


def _price(rng: np.random.Generator, low: float, high: float) -> float:
    """A shelf price: whole units with a usual ending (.99, .49, .00, ...)."""
    return draw_int(rng, int(low), int(high)) + draw_from(rng, (0.99, 0.49, 0.5, 0.0, 0.95, 0.25))


PRODUCTS = (
    ("Desk Lamp", 18, 60), ("Office Chair", 89, 349), ("Standing Desk", 249, 799),
    ("Monitor 27in", 159, 449), ("Wireless Mouse", 12, 49), ("Mechanical Keyboard", 59, 189),
    ("USB-C Hub", 19, 79), ("Webcam", 29, 129), ("Headset", 25, 199), ("Laptop Stand", 22, 89),
    ("Notebook A5", 3, 12), ("Whiteboard", 45, 180), ("Printer Paper", 4, 9),
    ("Ink Cartridge", 15, 65), ("Desk Organizer", 9, 35), ("Footrest", 25, 80),
    ("Cable Tray", 14, 40), ("Paper Shredder", 60, 240), ("Filing Cabinet", 120, 380),
    ("Label Printer", 45, 150),
)  # fmt: skip
"""(name, lowest price, highest price)."""


PRODUCT_CATEGORIES = ("Electronics", "Furniture", "Lighting", "Stationery", "Storage", "Accessories")


CITIES = (
    "Amsterdam", "Austin", "Berlin", "Boston", "Chicago", "Cork", "Denver", "Dublin",
    "Leeds", "Lisbon", "Lyon", "Madrid", "Newark", "Oslo", "Porto", "San Diego", "Seattle",
    "Toronto", "Vienna", "Zurich",
)  # fmt: skip


DEPARTMENTS = (
    "Engineering", "Finance", "Human Resources", "IT", "Legal", "Marketing", "Operations",
    "Sales", "Support",
)  # fmt: skip


def _catalog(rng: np.random.Generator, k: int) -> list[tuple[str, float]]:
    """k distinct products with a price each (one price per product in a task)."""
    return [(name, _price(rng, low, high)) for name, low, high in draw_sample(rng, PRODUCTS, k)]


def _codes(rng: np.random.Generator, k: int, prefix: str) -> list[str]:
    """k distinct product codes such as P-1042, not in any order."""
    return [f"{prefix}-{number}" for number in draw_sample(rng, range(1000, 9000), k)]
