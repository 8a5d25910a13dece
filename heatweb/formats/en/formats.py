"""Dates as the pages and the API show them (ISO 8601, UTC), also in the Django admin.

Django's own English formats ("Nov. 25, 2026, 10:44 a.m.") would make the
admin's lists read differently from every other page.
"""
DATETIME_FORMAT = "Y-m-d H:i:s T"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
DATE_FORMAT = "Y-m-d"
SHORT_DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i:s"
