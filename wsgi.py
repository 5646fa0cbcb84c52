"""gunicorn entry point: ``gunicorn wsgi:app``."""

from commerce_api import create_app

app = create_app()
