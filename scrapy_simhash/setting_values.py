"""Reading one ``SIMHASH_*`` setting's value as a bool or an int, with an error naming the setting,
the value and what is accepted. A leaf (it imports only ``defaults`` and ``errors``), so that the
stores' ``from_crawler`` read their settings without importing the Scrapy glue
(``scrapy_simhash.scrapy.settings``, which reads the rest)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, overload

from scrapy_simhash import defaults
from scrapy_simhash.errors import InvalidSettingError

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

__all__ = ["BOOL_VALUES", "read_bool"]


def invalid(name: str, value: Any, expected: str) -> InvalidSettingError:
    return InvalidSettingError(f"{name} ({value!r}) is invalid: {expected}")


#: What :func:`read_bool` accepts (Scrapy's ``getbool``), for the error messages.
BOOL_VALUES = "it must be True or False (also 1 or 0, 'True' or 'False', 'true' or 'false')"


def read_bool(name: str, value: Any) -> bool:
    """``value`` read as Scrapy's ``getbool`` reads a setting: ``True``/``False``, an integer
    (0: false), ``"1"``/``"0"``, ``"True"``/``"False"``, ``"true"``/``"false"``. A setting given
    with ``-s`` and a spider argument given with ``-a`` are strings, and ``bool("0")`` is true:
    anything else raises :class:`ValueError` naming ``name``, the value and what is accepted."""
    if isinstance(value, bool):
        return value
    try:
        return bool(int(value))
    except (TypeError, ValueError):
        if value in ("True", "true"):
            return True
        if value in ("False", "false"):
            return False
    raise invalid(name, value, BOOL_VALUES)


def get_bool(settings: BaseSettings, name: str) -> bool:
    return read_bool(name, settings.get(name, getattr(defaults, name)))


@overload
def get_int(
    settings: BaseSettings,
    name: str,
    low: int,
    high: int | None = None,
    *,
    optional: Literal[False] = False,
    high_text: str | None = None,
) -> int: ...


@overload
def get_int(
    settings: BaseSettings,
    name: str,
    low: int,
    high: int | None = None,
    *,
    optional: Literal[True],
    high_text: str | None = None,
) -> int | None: ...


def get_int(
    settings: BaseSettings,
    name: str,
    low: int,
    high: int | None = None,
    *,
    optional: bool = False,
    high_text: str | None = None,
) -> int | None:
    value = settings.get(name, getattr(defaults, name))
    if value is None or (optional and isinstance(value, str) and value.strip().lower() in ("", "none")):
        if optional:
            return None
        raise invalid(name, value, f"it must be an integer >= {low}")
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            number = None
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        number = None
    expected = (
        f"it must be an integer between {low} and {high_text or high}"
        if high is not None
        else f"it must be an integer >= {low}"
    )
    if optional:
        expected += " (or None for the default)"
    if number is None or number < low or (high is not None and number > high):
        raise invalid(name, value, expected)
    return number
