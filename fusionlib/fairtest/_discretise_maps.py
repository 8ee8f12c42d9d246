"""Raw-category -> Appendix B value maps used by :mod:`fusionlib.fairtest.discretise`.

Keys are the values of the raw tables (UCI Adult strings, ProPublica COMPAS strings, UCI
German credit codes A11...A202); values are the strings of seed 002's Tables 4-6.
"""

from __future__ import annotations

__all__ = ["ADULT_MAPS", "COMPAS_MAPS", "GERMAN_MAPS"]

_NON_PRIVATE = ("Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                "Without-pay", "Never-worked")

ADULT_MAPS: dict[str, dict[str, str]] = {
    "workclass": {"Private": "private", **{v: "non-private" for v in _NON_PRIVATE}},
    "education": {
        "Assoc-acdm": "assoc-acdm", "Assoc-voc": "assoc-voc", "Bachelors": "bachelors",
        "Doctorate": "doctorate", "HS-grad": "HS-grad", "Masters": "masters",
        "Prof-school": "prof-school", "Some-college": "some-college",
        # attended high school without graduating
        "9th": "high-school", "10th": "high-school", "11th": "high-school",
        "12th": "high-school",
        "Preschool": "primary/middle school", "1st-4th": "primary/middle school",
        "5th-6th": "primary/middle school", "7th-8th": "primary/middle school",
    },
    # all three Married-* values are "married" (spouse absent included)
    "marital-status": {
        "Married-civ-spouse": "married", "Married-AF-spouse": "married",
        "Married-spouse-absent": "married", "Never-married": "other", "Divorced": "other",
        "Separated": "other", "Widowed": "other",
    },
    "occupation": {v: v.lower() for v in (
        "Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing",
        "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv",
        "Prof-specialty", "Protective-serv", "Sales", "Tech-support", "Transport-moving")},
    "relationship": {
        "Husband": "spouse", "Wife": "spouse", "Own-child": "non-spouse",
        "Not-in-family": "non-spouse", "Other-relative": "non-spouse",
        "Unmarried": "non-spouse",
    },
    "race": {"White": "white", "Black": "non-white", "Asian-Pac-Islander": "non-white",
             "Amer-Indian-Eskimo": "non-white", "Other": "non-white"},
    "sex": {"Male": "male", "Female": "female"},
    "income": {"<=50K": "<=50K", ">50K": ">50K"},
}

COMPAS_MAPS: dict[str, dict[str, str]] = {
    "sex": {"Female": "Female", "Male": "Male"},
    "age_cat": {"25 - 45": "25 - 45", "Greater than 45": ">45", "Less than 25": "<25"},
    # seed 002 keeps African-American and Caucasian only (Appendix B)
    "race": {"African-American": "Black", "Caucasian": "White"},
    "c_charge_degree": {"F": "F", "M": "M"},
    "score_text": {"High": "High", "Low": "Low", "Medium": "Medium"},
    "two_year_recid": {"0": "0", "1": "1"},
}

# discretised column -> (raw column, code map); UCI german.doc gives the code meanings
GERMAN_MAPS: dict[str, tuple[str, dict[str, str]]] = {
    "checking-account": ("checking_status", {
        "A11": "<0 DM", "A12": "0 <= <200 DM", "A13": ">= 200 DM", "A14": "no account"}),
    "credit-history": ("credit_history", {
        "A30": "no credits taken", "A31": "all credits at this bank paid back duly",
        "A32": "existing credits paid back duly till now", "A33": "delay in paying off",
        "A34": "critical account"}),
    "purpose": ("purpose", {
        "A40": "car (new)", "A41": "car (used)", "A42": "furniture/equipment",
        "A43": "radio/television", "A44": "domestic appliances", "A45": "repairs",
        "A46": "education", "A48": "retraining", "A49": "business", "A410": "others"}),
    "savings-account": ("savings", {
        "A61": "<100 DM", "A62": "100 <= <500 DM", "A63": "500 <= < 1000 DM",
        "A64": ">= 1000 DM", "A65": "no savings account"}),
    "employment-since": ("employment", {
        "A71": "unemployed", "A72": "<1 years", "A73": "1 <= < 4 years",
        "A74": "4 <= <7 years", "A75": ">=7 years"}),
    "installment-rate": ("installment_rate", {str(v): str(v) for v in range(1, 5)}),
    "other-debtors": ("other_debtors", {
        "A101": "none", "A102": "co-applicant", "A103": "guarantor"}),
    "residence-since": ("residence_since", {str(v): str(v) for v in range(1, 5)}),
    "property": ("property", {
        "A121": "real estate", "A122": "savings agreement/life insurance",
        "A123": "car or other", "A124": "unknown / no property"}),
    "other-installment-plans": ("other_installment_plans", {
        "A141": "bank", "A142": "store", "A143": "none"}),
    "housing": ("housing", {"A151": "rent", "A152": "own", "A153": "for free"}),
    "existing-credits": ("existing_credits", {str(v): str(v) for v in range(1, 5)}),
    "job": ("job", {
        "A171": "unemployed/ unskilled - non-resident", "A172": "unskilled - resident",
        "A173": "skilled employee / official",
        "A174": "management/ highly qualified employee"}),
    "number-people-provide-maintenance-for": ("num_dependents", {"1": "1", "2": "2"}),
    "telephone": ("telephone", {"A191": "none", "A192": "yes"}),
    "foreign-worker": ("foreign_worker", {"A201": "yes", "A202": "no"}),
}
