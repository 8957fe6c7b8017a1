"""Type stub of ``scrapy_simhash_native``, the native core of scrapy-simhash (``native/src``).

Shipped in the wheel with ``py.typed`` (maturin packages ``<module>.pyi`` from the project root).
``tests/test_native_stub.py`` checks it against the built module: the same names, and the same
parameter names as the module's ``__text_signature__``. Everything that depends on the running
Python's Unicode tables is handed in by the caller (``scrapy_simhash``'s native loader): code
point ranges are half-open ``(start, end)`` pairs computed by ``re``.
"""

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from typing import Any, Literal, TypeAlias, final

#: The crate's version (``native/Cargo.toml``); equal to ``scrapy_simhash.__version__``.
__version__: str

#: ``(text, links, owner, meta, flags, weight, base, teaser)`` of one block of ``HtmlWalker.walk``.
_Block: TypeAlias = tuple[str, int, int, int, int, int, int, bool]

@final
class Core:
    """Normalised text -> tokens -> weights -> SimHash (``features="words"``), with the GIL released.

    Loads jieba's ``dict.txt`` (about 0.3 s). A ``str`` with lone surrogates raises
    ``UnicodeEncodeError`` from every method (the caller then takes the Python path).
    """

    def __new__(
        cls,
        dict_path: str | PathLike[str],
        skip_words: Sequence[str],
        word_ranges: Sequence[tuple[int, int]],
        digit_ranges: Sequence[tuple[int, int]],
        space_ranges: Sequence[tuple[int, int]],
        log_tf: Sequence[float],
    ) -> Core: ...
    def tokens(self, text: str, hmm: bool) -> list[str]:
        """The tokens of normalised ``text`` (``FeatureExtractor.tokens`` after ``normalize``)."""
    def fingerprint(
        self,
        text: str,
        *,
        hmm: bool,
        bits: Literal[64, 128],
        feature_hash: Literal["blake2b", "xxh3"],
        weighting: Literal["log_tf", "tf"],
        min_features: int,
    ) -> tuple[int, bool] | None:
        """``(fingerprint, short)`` of normalised ``text``; ``None`` when it has no feature."""
    def page(
        self,
        text: str,
        rest: str | None,
        *,
        hmm: bool,
        bits: Literal[64, 128],
        feature_hash: Literal["blake2b", "xxh3"],
        weighting: Literal["log_tf", "tf"],
        min_features: int,
        lines: bool = True,
    ) -> tuple[int, bool, bytes, int | None, list[int]] | None:
        """``(fingerprint, short, sketch, content_key, line_keys)`` of a page's normalised text
        and other content-like text; ``None`` when ``text`` has no feature."""
    def count_features(self, text: str, hmm: bool) -> int:
        """The number of distinct features of normalised ``text``."""

@final
class HtmlWalker:
    """The block walk of ``extract`` over lxml's parsed tree."""

    def __new__(
        cls,
        element_type: type[Any],
        space_ranges: Sequence[tuple[int, int]],
        digit_ranges: Sequence[tuple[int, int]],
        rules: Mapping[str, Any],
    ) -> HtmlWalker: ...
    def walk(
        self, root: Any, *, remaining: float | None, max_blocks: int, step: int
    ) -> (
        tuple[Literal["ok"], list[_Block], list[int], list[int], int, int, bool]
        | tuple[Literal["large"]]
        | tuple[Literal["budget"]]
        | tuple[Literal["unsupported"], str]
    ):
        """``extract._Walker.walk(root, 0, False, 0)``: ``("ok", blocks, parent, end, landmark,
        next_check, comments)`` (``comments``: ``comment_runs(root)``, read by the same walk), a
        stop (``"large"``, ``"budget"``), or ``("unsupported", why)``."""
    @staticmethod
    def rule_names() -> list[str]:
        """The keys of the rules mapping the constructor reads (``text.rules.native_rules``)."""
    @staticmethod
    def walk_fields() -> list[str]:
        """The fields of ``walk``'s result when it walked the tree."""
    def class_words(self, text: str) -> tuple[bool, bool]:
        """Whether a class/id string matches ``extract._NEGATIVE_RE`` and ``_META_CLASS_RE``."""
    def main_blocks(self, blocks: list[Any], parent: list[int], end: list[int], relaxed: bool) -> list[Any] | None:
        """``region._main_blocks``: the content region's blocks among ``blocks`` (``_Block``
        objects); ``None`` when one is not classified yet."""
    def comment_runs(self, root: Any) -> bool:
        """Whether a comment below ``root`` may split a text run as ``extract._comment_splits``
        asks: when false, it does not."""

@final
class FlatText:
    """The regular-expression fallback of ``extract`` and ``templates``' line keys."""

    def __new__(
        cls,
        word_ranges: Sequence[tuple[int, int]],
        space_ranges: Sequence[tuple[int, int]],
        digit_ranges: Sequence[tuple[int, int]],
        folds: Sequence[tuple[str, str]],
        backrefs: Sequence[tuple[str, str]],
        invisible: Sequence[str],
        block: Sequence[str],
        entities: Mapping[str, str],
        invalid_charrefs: Mapping[int, str],
        invalid_codepoints: set[int] | frozenset[int],
    ) -> FlatText: ...
    def document(self, html: str) -> tuple[str | None, str]:
        """``(title, text)``: the unescaped ``<title>`` (``None``: none) and ``extract._flat_text``."""
    def line_keys(self, text: str) -> list[int]:
        """``templates.line_key`` of each line of normalised ``text``."""
