"""The word pools the table families draw their tables from (departments, cities, regions,
companies, products, teams, projects, plans, mail domains), and people's names and emails."""

from __future__ import annotations

import numpy as np

from rlenvs.core import names
from rlenvs.core.names import WIDE_FIRST_NAMES, WIDE_LAST_NAMES

DEPARTMENTS = ("Engineering", "Finance", "Human Resources", "IT", "Legal", "Marketing", "Operations", "Sales", "Support")  # fmt: skip


CITIES = (
    "Amsterdam", "Austin", "Berlin", "Boston", "Chicago", "Denver", "Dublin", "Leeds",
    "Lisbon", "Lyon", "Madrid", "New York", "Oslo", "Porto", "San Diego", "Seattle",
    "Toronto", "Vienna", "Zurich",
)  # fmt: skip


REGIONS = ("Central", "East", "North", "South", "West")


COMPANIES = (
    "Bluebird Dental", "Clearwater Spa", "Granite Builders", "Harbor Cafe", "Lakeside Clinic",
    "Maple Bakery", "Northwind Traders", "Oakridge School", "Pinecrest Books", "Redwood Studio",
    "Silverline Taxi", "Summit Fitness",
)  # fmt: skip


PRODUCTS = (
    "Desk Lamp", "Docking Station", "HDMI Cable", "Headset", "Keyboard", "Laptop Stand",
    "Monitor", "Mouse", "Notebook", "USB Hub", "Webcam", "Whiteboard",
)  # fmt: skip


TEAMS = ("Enterprise", "Inbound", "Mid Market", "Partners", "Renewals")


PROJECTS = ("Apollo", "Borealis", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor")


PLANS = ("Basic", "Family", "Premium", "Standard", "Student")


DOMAINS = ("fastmail.com", "gmail.com", "icloud.com", "outlook.com", "proton.me", "yahoo.com")


def _person(rng: np.random.Generator) -> str:
    return names.person(rng, WIDE_FIRST_NAMES, WIDE_LAST_NAMES)


def _email(first: str, last: str, domain: str) -> str:
    letters = "".join(ch for ch in last if ch.isalpha())
    return f"{first}.{letters}@{domain}".lower()
