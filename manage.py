#!/usr/bin/env python
"""Django's command-line utility for heatweb.

Commands use the data directory of the server running from this checkout
(``heatweb/data_dirs.py``) and stop with one line when there is no database.
"""
import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heatweb.settings")
    from heatweb.data_dirs import DataDirError, prepare_command

    try:
        prepare_command(sys.argv)
    except DataDirError as error:
        sys.exit(str(error))
    from django.core.management import execute_from_command_line
    from django.db import DatabaseError

    try:
        execute_from_command_line(sys.argv)
    except DatabaseError as error:
        if "no such table" not in str(error) and "does not exist" not in str(error):
            raise
        from django.conf import settings

        name = settings.DATABASES["default"]["NAME"]
        sys.exit(f"heatweb: the database {name} has no heatweb tables ({error}): run "
                 f"`manage.py migrate` there, or set HEATWEB_DATA_DIR / DATABASE_URL as the "
                 f"server was started with.")


if __name__ == "__main__":
    main()
