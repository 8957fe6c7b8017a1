"""What the tests share that is not a fixture (the fixtures are in ``tests/conftest.py``): pages and
responses (``pages``), the demo site and its crawls (``demo``), the stores of the contract tests
(``stores``), real Redis servers (``redis_servers``), schedule states (``states``), hostile HTML
(``native_fuzz``) and what CI expects (``ci``). ``tests/`` is on ``sys.path`` (``pythonpath`` in setup.cfg): ``from
helpers.pages import article_html``."""
