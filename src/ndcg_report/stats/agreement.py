"""Label agreement of two judgment sets on the pairs both judge: confusion, kappas, Krippendorff's alpha.

`label_agreement(reference, other)` takes the two sets' labels of the same (qid, docid) pairs, aligned,
and returns a LabelAgreement. Libraries: scikit-learn's `cohen_kappa_score` (unweighted, linear,
quadratic), the `krippendorff` package (ordinal and interval alpha), both imported on first use.

Float grades: the interval statistics (interval alpha, the mean label difference) and the binary kappa
thresholds take the values as they are; the categorical ones (confusion matrix, observed agreement,
the kappas, per-label precision and recall, ordinal alpha) take them rounded to the nearest whole
grade, halves up (floor(x + 0.5)), and `binning` says so. A statistic that is undefined on the data (every
pair with one label: chance agreement is 1) is NaN, and `undefined` says why.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

ROUNDED = "rounded to the nearest whole grade, halves up"
MAX_LABEL_RANGE = 100  # whole grades from the lowest to the highest: above it, the labels present only
LIBRARY_CELLS = 1 << 22  # krippendorff.alpha holds pairs x values**2 floats: above it, the same alpha from the coincidences


@dataclass(frozen=True)
class BinaryAgreement:
    """Cohen's kappa at one relevance level: a label >= `level` is relevant (the values as they are, as
    trec_eval's -l), and the share of shared pairs each set calls relevant there."""

    level: int
    kappa: float
    reference_relevant: float
    other_relevant: float


@dataclass(frozen=True)
class LabelScore:
    """One label (binned) of the confusion matrix: how often each set gives it, and the other set's
    precision (of its pairs with this label, the share the reference labels alike) and recall (of the
    reference's pairs with this label, the share the other set labels alike); NaN where nothing is counted."""

    label: int
    reference_count: int
    other_count: int
    precision: float
    recall: float


@dataclass(frozen=True)
class LabelAgreement:
    """How far two judgment sets agree on the (qid, docid) pairs both judge (made by `label_agreement`).

    `confusion[i][j]` counts the shared pairs the reference labels `labels[i]` and the other set
    `labels[j]` (labels binned as `binning` says; '' for whole-number labels). Kappas and alphas are
    NaN where undefined, with the reason in `undefined` (statistic name -> reason).
    """

    shared: int
    only_reference: int
    only_other: int
    labels: tuple[int, ...]
    binning: str
    confusion: tuple[tuple[int, ...], ...]
    observed_agreement: float
    cohen_kappa: float
    weighted_kappa_linear: float
    weighted_kappa_quadratic: float
    alpha_ordinal: float
    alpha_interval: float
    binary: tuple[BinaryAgreement, ...]
    per_label: tuple[LabelScore, ...]
    mean_difference: float  # other - reference, on the values as they are: > 0, the other set is more lenient
    undefined: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-able: the keys `pairs`, `labels`, `binning`, `confusion`, `observed_agreement`,
        `cohen_kappa`, `weighted_kappa` {linear, quadratic}, `krippendorff_alpha` {ordinal, interval},
        `binary_kappa` {level: kappa}, `relevant_share` {level: {reference, other}}, `per_label`,
        `mean_label_difference`, `undefined`; NaN as None, levels and labels as JSON keys (strings)."""
        return {
            "pairs": {"shared": self.shared, "only_reference": self.only_reference, "only_other": self.only_other},
            "labels": list(self.labels),
            "binning": self.binning,
            "confusion": [list(row) for row in self.confusion],
            "observed_agreement": json_number(self.observed_agreement),
            "cohen_kappa": json_number(self.cohen_kappa),
            "weighted_kappa": {"linear": json_number(self.weighted_kappa_linear),
                               "quadratic": json_number(self.weighted_kappa_quadratic)},
            "krippendorff_alpha": {"ordinal": json_number(self.alpha_ordinal),
                                   "interval": json_number(self.alpha_interval)},
            "binary_kappa": {str(b.level): json_number(b.kappa) for b in self.binary},
            "relevant_share": {str(b.level): {"reference": json_number(b.reference_relevant),
                                              "other": json_number(b.other_relevant)} for b in self.binary},
            "per_label": [{"label": s.label, "reference": s.reference_count, "other": s.other_count,
                           "precision": json_number(s.precision), "recall": json_number(s.recall)}
                          for s in self.per_label],
            "mean_label_difference": json_number(self.mean_difference),
            "undefined": dict(self.undefined),
        }


def json_number(value: float) -> float | None:
    """A float for JSON: NaN (and infinities) as None."""
    return float(value) if value is not None and math.isfinite(value) else None


def binned(values: np.ndarray) -> tuple[np.ndarray, str]:
    """(whole grades, how they were made): the values as integers if they all are whole, else each
    rounded to the nearest whole grade with halves up, and ROUNDED."""
    values = np.asarray(values, dtype=np.float64)
    if np.all(values == np.floor(values)):
        return values.astype(np.int64), ""
    return np.floor(values + 0.5).astype(np.int64), ROUNDED


def label_agreement(reference: np.ndarray, other: np.ndarray, *, only_reference: int = 0,
                    only_other: int = 0) -> LabelAgreement:
    """Every agreement statistic of two sets' labels of the same pairs (reference[i] and other[i] label
    one (qid, docid)); only_reference and only_other count the pairs one set alone judges. No shared
    pair gives every statistic NaN (the caller refuses that input); one label in both sets, NaN kappas
    and alphas with their reason."""
    reference = np.asarray(reference, dtype=np.float64)
    other = np.asarray(other, dtype=np.float64)
    if reference.shape != other.shape or reference.ndim != 1:
        raise ValueError("reference and other must be 1-D arrays of the same length (one label per shared pair)")
    both, how = binned(np.concatenate([reference, other]))
    ref_bins, other_bins = both[: len(reference)], both[len(reference):]
    labels = _label_axis(both)
    n = len(reference)
    undefined = _undefined(reference, other, both)
    confusion = _confusion(ref_bins, other_bins, labels)
    kappas = {weights: math.nan if "cohen_kappa" in undefined else _kappa(ref_bins, other_bins, labels, weights)
              for weights in (None, "linear", "quadratic")}
    alphas = {"ordinal": math.nan if "krippendorff_alpha.ordinal" in undefined else _alpha(ref_bins, other_bins, "ordinal"),
              "interval": math.nan if "krippendorff_alpha.interval" in undefined else _alpha(reference, other, "interval")}
    binary = tuple(_binary(reference, other, level) for level in labels[1:] if _present(both, level))
    undefined.update({f"binary_kappa.{b.level}": _one_side(reference, other, b.level) for b in binary if math.isnan(b.kappa)})
    return LabelAgreement(
        shared=n, only_reference=int(only_reference), only_other=int(only_other), labels=tuple(labels), binning=how,
        confusion=tuple(tuple(int(c) for c in row) for row in confusion),
        observed_agreement=float(np.trace(confusion) / n) if n else math.nan,
        cohen_kappa=kappas[None], weighted_kappa_linear=kappas["linear"], weighted_kappa_quadratic=kappas["quadratic"],
        alpha_ordinal=alphas["ordinal"], alpha_interval=alphas["interval"], binary=binary,
        per_label=tuple(_label_score(confusion, i, label) for i, label in enumerate(labels)),
        mean_difference=float(np.mean(other - reference)) if n else math.nan, undefined=undefined,
    )


def _undefined(reference: np.ndarray, other: np.ndarray, grades: np.ndarray) -> dict[str, str]:
    """The statistics undefined on these labels, each with its reason: every one without a shared pair;
    the kappas and ordinal alpha when every shared pair has one (binned) label in both sets, interval
    alpha when every value is the same (chance agreement is then 1: 0 / 0)."""
    if len(reference) == 0:
        reason = "no pair is judged by both sets"
        return {name: reason for name in ("observed_agreement", "cohen_kappa", "weighted_kappa", "krippendorff_alpha.ordinal",
                                          "krippendorff_alpha.interval", "mean_label_difference")}
    undefined = {}
    if np.unique(grades).size == 1:
        how = "the label" if np.all(grades == np.concatenate([reference, other])) else "the binned label"
        reason = f"every shared pair has {how} {int(grades[0])} in both sets, so chance agreement is 1"
        undefined = {"cohen_kappa": reason, "weighted_kappa": reason, "krippendorff_alpha.ordinal": reason}
    if np.unique(np.concatenate([reference, other])).size == 1:
        undefined["krippendorff_alpha.interval"] = (f"every shared pair has the value {reference[0]:g} in both sets, "
                                                    "so chance agreement is 1")
    return undefined


def _label_axis(grades: np.ndarray) -> list[int]:
    """The confusion matrix's labels: every whole grade from the lowest to the highest present (so the
    weighted kappas weigh by grade distance), or the labels present only if that range is too wide."""
    if len(grades) == 0:
        return []
    low, high = int(grades.min()), int(grades.max())
    if high - low + 1 <= MAX_LABEL_RANGE:
        return list(range(low, high + 1))
    return [int(g) for g in np.unique(grades)]


def _present(grades: np.ndarray, level: int) -> bool:
    return bool(np.any(grades == level))


def _confusion(reference: np.ndarray, other: np.ndarray, labels: list[int]) -> np.ndarray:
    """Counts of (reference label, other label), rows and columns in `labels` order (sorted; every label in it)."""
    axis, size = np.asarray(labels, dtype=np.int64), len(labels)
    if not size:
        return np.zeros((0, 0), dtype=np.int64)
    rows, columns = np.searchsorted(axis, reference), np.searchsorted(axis, other)
    return np.bincount(rows * size + columns, minlength=size * size).reshape(size, size)


def _kappa(reference: np.ndarray, other: np.ndarray, labels: list[int], weights: str | None) -> float:
    """scikit-learn's cohen_kappa_score over `labels` (weights by their position: whole grades in a row)."""
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(reference, other, labels=labels, weights=weights))


def _alpha(reference: np.ndarray, other: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of two judges who label every unit: the `krippendorff` package's, or, where its
    arrays (units x values**2) would not fit LIBRARY_CELLS, the same formula over the coincidence matrix."""
    domain = np.unique(np.concatenate([reference, other]))
    if len(reference) * len(domain) ** 2 <= LIBRARY_CELLS:
        import krippendorff

        return float(krippendorff.alpha(reliability_data=np.vstack([reference, other]).astype(np.float64),
                                        value_domain=domain.astype(np.float64), level_of_measurement=level))
    return coincidence_alpha(reference, other, level)


def coincidence_alpha(reference: np.ndarray, other: np.ndarray, level: str) -> float:
    """Krippendorff's alpha (ordinal or interval) of two judges labelling every unit, from the coincidence
    matrix o = C + C^T (C: the counts of each pair of values): 1 - (n - 1) sum(o * d) / sum(n_c n_k d),
    n = 2 x units, d the level's squared distance (Krippendorff 2011, "Computing Krippendorff's alpha")."""
    domain, codes = np.unique(np.concatenate([reference, other]), return_inverse=True)
    size, units = len(domain), len(reference)
    counts = np.bincount(codes[:units] * size + codes[units:], minlength=size * size).reshape(size, size)
    coincidences = (counts + counts.T).astype(np.float64)
    n_v = coincidences.sum(axis=1)
    if level == "interval":
        distance = (domain[:, None] - domain[None, :]) ** 2
    else:  # ordinal: the values between c and k counted, less half of c's and k's own
        cumulative = np.concatenate([[0.0], np.cumsum(n_v)])
        low, high = np.minimum.outer(np.arange(size), np.arange(size)), np.maximum.outer(np.arange(size), np.arange(size))
        distance = (cumulative[high + 1] - cumulative[low] - (n_v[low] + n_v[high]) / 2) ** 2
    n = n_v.sum()
    expected = float((np.outer(n_v, n_v) * distance).sum())
    return 1 - (n - 1) * float((coincidences * distance).sum()) / expected if expected else math.nan


def _binary(reference: np.ndarray, other: np.ndarray, level: int) -> BinaryAgreement:
    """Cohen's kappa of 'label >= level' against '< level' (the values as they are); NaN if both sets
    put every shared pair on one side (_one_side says which)."""
    ref_relevant, other_relevant = reference >= level, other >= level
    one_side = np.unique(np.concatenate([ref_relevant, other_relevant])).size < 2
    kappa = math.nan if one_side else _kappa(ref_relevant.astype(int), other_relevant.astype(int), [0, 1], None)
    return BinaryAgreement(level=int(level), kappa=kappa, reference_relevant=float(ref_relevant.mean()),
                           other_relevant=float(other_relevant.mean()))


def _one_side(reference: np.ndarray, other: np.ndarray, level: int) -> str:
    """Why binary kappa at `level` is undefined: both sets put every shared pair on one side of it."""
    side = "relevant" if bool(reference[0] >= level) else "not relevant"
    return f"both sets call every shared pair {side} at level {level}, so chance agreement is 1"


def _label_score(confusion: np.ndarray, i: int, label: int) -> LabelScore:
    """Precision and recall of the other set on one label, against the reference (row i, column i)."""
    hits, reference_count, other_count = int(confusion[i, i]), int(confusion[i].sum()), int(confusion[:, i].sum())
    return LabelScore(label=int(label), reference_count=reference_count, other_count=other_count,
                      precision=hits / other_count if other_count else math.nan,
                      recall=hits / reference_count if reference_count else math.nan)
