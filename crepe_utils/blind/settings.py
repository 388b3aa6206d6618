"""The blind scorers' settings, as one object."""
from __future__ import annotations

from dataclasses import dataclass

WORDLISTS = ("large", "small")


@dataclass(frozen=True)
class BlindSettings:
    """Every knob of the blind scorers. The defaults are fixed in advance, never tuned on a benchmark."""

    folds: int = 5                      #: cross-fitting folds (by image) of the trained scorers
    #: classifier: L2 penalty on the weights against the summed log-loss (scikit-learn's default, C = 1)
    l2: float = 1.0
    min_texts: int = 2                  #: classifier: features that fewer training texts have are left out
    #: classifier: L-BFGS stops when an iteration lowers the objective by less than this fraction
    tolerance: float = 1e-5
    max_iter: int = 1000                #: classifier: L-BFGS iterations at most (a guard; a warning when hit)
    #: wordfreq: frequency of a word its list lacks; 1e-9 is ten times rarer than the rarest word
    #: of the large English list (it keeps words down to 1e-8)
    unknown_frequency: float = 1e-9
    wordlist: str = "large"             #: wordfreq's English list: "large" or "small"

    def __post_init__(self):
        if not isinstance(self.folds, int) or self.folds < 2:
            raise ValueError(f"BlindSettings.folds must be an integer of at least 2, got {self.folds!r}")
        if not self.l2 > 0:
            raise ValueError(f"BlindSettings.l2 must be positive, got {self.l2!r}")
        if not isinstance(self.min_texts, int) or self.min_texts < 1:
            raise ValueError(f"BlindSettings.min_texts must be a positive integer, got {self.min_texts!r}")
        if not 0 < self.tolerance < 1:
            raise ValueError(f"BlindSettings.tolerance must lie in (0, 1), got {self.tolerance!r}")
        if not isinstance(self.max_iter, int) or self.max_iter < 1:
            raise ValueError(f"BlindSettings.max_iter must be a positive integer, got {self.max_iter!r}")
        if not 0 < self.unknown_frequency < 1:
            raise ValueError(f"BlindSettings.unknown_frequency must lie in (0, 1), got {self.unknown_frequency!r}")
        if self.wordlist not in WORDLISTS:
            raise ValueError(f"BlindSettings.wordlist must be one of {WORDLISTS}, got {self.wordlist!r}")
