"""The fingerprint layer: a page's text -> its SimHash fingerprint and the evidence it rests on
(:class:`PageFingerprint`: the change sketch, the content key, its own text). ``simhash``: the
fingerprints; ``sketch``: the change sketch (how much a page changed between fetches);
``novelty``: the novelty text (what a page's own text adds to a kept page's); ``templates``: the
site template lines learned per host; ``fields``: an item's fields as the text to fingerprint. It imports the
text layer, never the decision or the store."""

from scrapy_simhash.fingerprint.simhash import (
    EmptyTextError,
    Fallback,
    Fingerprinter,
    PageFingerprint,
    hamming,
    hamming_similarity,
)

__all__ = ["EmptyTextError", "Fallback", "Fingerprinter", "PageFingerprint", "hamming", "hamming_similarity"]
