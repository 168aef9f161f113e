"""The LRU cache helper, for energies and service: one copy, kept in adcore (see adcore.lru)."""

from adcore import LRU

__all__ = ["LRU"]
