"""Konnectz build tools (a dev-only workspace member: no runtime package depends on it).

- :mod:`konnectz_tools.generate`: builds the generated long tail of the app catalogue
  (``make catalogue``, ``make check-catalogue``; see docs/catalogue.md).
"""
