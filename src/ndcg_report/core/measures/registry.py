"""The one table of measure families (their Computations) and trec_eval's printing order.

The name parsing (names.py), the presets (core/presets.py), `--format trec` (core/output_formats.py)
and evaluate (core/evaluation_pass.py) read the families from here. A new family is a module of
its own (its definition, its Family row, its computation) listed in COMPUTATIONS; its trec_eval
names take their place in the printing order from TREC_EVAL_ORDER (a name trec_eval lacks goes in
OWN_ORDER), and `-m all_trec` takes it if trec_eval has it; catalogue.py lists it (eval --list, the
measures page, the names an error gives).
"""

from __future__ import annotations

from ndcg_report.core.measures.binary.ap import AP, GM_MAP
from ndcg_report.core.measures.binary.bing import BING
from ndcg_report.core.measures.binary.bpref import BPREF, GM_BPREF
from ndcg_report.core.measures.binary.infap import INFAP
from ndcg_report.core.measures.binary.iprec import ELEVEN_PT_AVG, IPREC
from ndcg_report.core.measures.binary.precision_recall import RELATIVE_P, P, R
from ndcg_report.core.measures.binary.rprec import RPREC, RPREC_MULT
from ndcg_report.core.measures.binary.rr import RR
from ndcg_report.core.measures.binary.success import SUCCESS
from ndcg_report.core.measures.family import Computation, Family
from ndcg_report.core.measures.graded.g import G
from ndcg_report.core.measures.graded.judged import NDCG_JUDGED
from ndcg_report.core.measures.graded.ndcg import NDCG
from ndcg_report.core.measures.graded.ndcg_rel import NDCG_REL
from ndcg_report.core.measures.graded.rbp import RBP, RBP_RESID
from ndcg_report.core.measures.graded.rndcg import RNDCG
from ndcg_report.core.measures.retrieved.counts import NUM_NONREL_JUDGED_RET, NUM_Q, NUM_REL, NUM_REL_RET, NUM_RET
from ndcg_report.core.measures.retrieved.set_measures import SET_AP, SET_F, SET_P, SET_R, SET_REL_P, UTILITY
from ndcg_report.core.measures.retrieved.unjudged import UNJ

COMPUTATIONS: dict[str, Computation] = {computation.family.name: computation for computation in (
    NDCG, NDCG_JUDGED, P, R, AP, RR, RPREC, SUCCESS, NUM_RET, NUM_REL, NUM_REL_RET,
    NUM_Q, GM_MAP, BPREF, IPREC, INFAP, GM_BPREF, RPREC_MULT, UTILITY, ELEVEN_PT_AVG, BING, G, NDCG_REL, RNDCG,
    RELATIVE_P, SET_P, SET_REL_P, SET_R, SET_AP, SET_F, NUM_NONREL_JUDGED_RET, RBP, RBP_RESID, UNJ,
)}
FAMILIES: dict[str, Family] = {name: computation.family for name, computation in COMPUTATIONS.items()}

# A family and its judged-only twin: nDCG(judged_only=True) is nDCG_judged (--judged-only adds the twins)
JUDGED_ONLY = {c.judged_only_of: name for name, c in COMPUTATIONS.items() if c.judged_only_of is not None}
# ir_measures' switches that name another family of the table: nDCG(judged_only=True), SetP(relative=True)
PARAMETER_TWINS = {"judged_only": JUDGED_ONLY, "relative": {"SetP": "SetRelP"}}
PARAMETER_EXAMPLES = {"judged_only": "nDCG(judged_only=True)@10", "relative": "SetP(relative=True)"}

# trec_eval computes and prints its measures in this order (its measures.c), whatever order -m names them in
TREC_EVAL_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
    "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
    "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap", "rbp",
    "rbp_resid", "unj",
)
# the names of our own (trec_eval lacks them), printed after trec_eval's in this order
OWN_ORDER = ("recip_rank_cut", "ndcg_judged", "ndcg_judged_cut")


def _printed_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every trec name of the families in printing order, each graded one followed by its
    exponential-gain twin; the names trec_eval has, in its order)."""
    position = {name: i for i, name in enumerate(TREC_EVAL_ORDER + OWN_ORDER)}
    names = {}
    for family in FAMILIES.values():
        for with_cutoff, name in ((False, family.trec), (True, family.trec_cut)):
            if name is None:
                continue
            if name not in position:
                raise AssertionError(f"{family.name}: {name} has no place in TREC_EVAL_ORDER or OWN_ORDER")
            names[name] = tuple(dict.fromkeys(family.trec_base(with_cutoff, gain) for gain in ("linear", "exponential")))
    order = sorted(names, key=position.__getitem__)
    return (tuple(printed for name in order for printed in names[name]),
            tuple(name for name in order if name in TREC_EVAL_ORDER))


# --format trec prints the measures in this order; -m all_trec is every trec_eval measure computed here:
# every numeric one of trec_eval's own all_trec
TREC_ORDER, _TREC_EVAL_NAMES = _printed_names()
TREC_NICKNAMES = {"all_trec": _TREC_EVAL_NAMES}
