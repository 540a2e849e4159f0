"""Write the format-faithful excerpts (datasets with no public copy of the raw file).

Run from anywhere: ``python tests/data/excerpts/make_format_faithful.py``.  The
output is deterministic (fixed seed, no time stamps): tests/test_excerpts.py
checks that running it reproduces the stored files byte for byte.

What is real in these files and what is made up is listed in MANIFEST.tsv and
README.md.  In short, each file follows its dataset's published format
(column count and order, separators, label coding, number formatting); the
values are drawn at random except for the few rows quoted from public sources:

- cod-rna: LIBSVM page, binary/cod-rna: 8 features, labels -1/1, svmlight
  lines "label 1:v ... 8:v"; the first 5 rows are quoted from the README of
  XD-DENG/Spark-ML-Intro (they match cod-rna's layout: free energy, length,
  six nucleotide frequencies).
- ijcnn1: LIBSVM page, binary/ijcnn1: 22 features, labels -1/1, about 10 %
  positive, sparse (zero values omitted).
- superconduct train.csv: UCI "Superconductivty Data": header line, 81
  features (number_of_elements + 8 element properties x 10 statistics),
  critical_temp last; unique_m.csv: one column per element H..Rn,
  critical_temp, material.
- YearPredictionMSD.txt: UCI: no header, 91 comma-separated values per line,
  the year (1922..2011) first, then 12 timbre averages and 78 timbre
  covariances; the first row is the file's real first row (quoted in public
  code, see MANIFEST.tsv).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SEED = 20230116

CODRNA_QUOTED = (
    "-1 1:-766 2:128 3:0.140625 4:0.304688 5:0.234375 6:0.140625 7:0.304688 8:0.234375",
    "-1 1:-726 2:131 3:0.129771 4:0.328244 5:0.229008 6:0.129771 7:0.328244 8:0.229008",
    "-1 1:-648 2:123 3:0.146341 4:0.333333 5:0.211382 6:0.146341 7:0.333333 8:0.211382",
    "-1 1:-764 2:124 3:0.137097 4:0.322581 5:0.233871 6:0.137097 7:0.322581 8:0.233871",
    "-1 1:-584 2:130 3:0.153846 4:0.392308 5:0.184615 6:0.153846 7:0.392308 8:0.184615",
)

# First row of YearPredictionMSD.txt (year 2001), quoted in public code (see MANIFEST.tsv).
MSD_FIRST_ROW = (
    "2001,49.94357,21.47114,73.07750,8.74861,-17.40628,-13.09905,-25.01202,-12.23257,7.83089,"
    "-2.46783,3.32136,-2.31521,10.20556,611.10913,951.08960,698.11428,408.98485,383.70912,"
    "326.51512,238.11327,251.42414,187.17351,100.42652,179.19498,-8.41558,-317.87038,95.86266,"
    "48.10259,-95.66303,-18.06215,1.96984,34.42438,11.72670,1.36790,7.79444,-0.36994,-133.67852,"
    "-83.26165,-37.29765,73.04667,-37.36684,-3.13853,-24.21531,-13.23066,15.93809,-18.60478,"
    "82.15479,240.57980,-10.29407,31.58431,-25.38187,-3.90772,13.29258,41.55060,-7.26272,"
    "-21.00863,105.50848,64.29856,26.08481,-44.59110,-8.30657,7.93706,-10.73660,-95.44766,"
    "-82.03307,-35.59194,4.69525,70.95626,28.09139,6.02015,-37.13767,-41.12450,-8.40816,"
    "7.19877,-8.60176,-5.90857,-12.32437,14.68734,-54.32125,40.14786,13.01620,-54.40548,"
    "58.99367,15.37344,1.11144,-23.08793,68.40795,-1.82223,-27.46348,2.26327"
)
# Years of the generated MSD rows: in range 1970..2010 (both ends included) and outside it
# (the reader keeps only 1970..2010, the authors' skipLabels rule).
MSD_YEARS = (
    1956,
    1962,
    1969,
    1970,
    1971,
    1975,
    1980,
    1984,
    1991,
    1999,
    2001,
    2003,
    2005,
    2007,
    2009,
    2010,
    2011,
)

SUPERCONDUCT_PROPERTIES = (
    "atomic_mass",
    "fie",
    "atomic_radius",
    "Density",
    "ElectronAffinity",
    "FusionHeat",
    "ThermalConductivity",
    "Valence",
)
SUPERCONDUCT_STATISTICS = (
    "mean",
    "wtd_mean",
    "gmean",
    "wtd_gmean",
    "entropy",
    "wtd_entropy",
    "range",
    "wtd_range",
    "std",
    "wtd_std",
)
ELEMENTS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr "
    "Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm "
    "Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn"
).split()


def superconduct_columns() -> list[str]:
    """The 82 column names of train.csv: number_of_elements, 80 statistics, critical_temp."""
    names = ["number_of_elements"]
    names += [
        f"{stat}_{prop}" for prop in SUPERCONDUCT_PROPERTIES for stat in SUPERCONDUCT_STATISTICS
    ]
    return names + ["critical_temp"]


def _g(value: float) -> str:
    return f"{value:.6g}"


def _codrna_row(rng: np.random.Generator, label: int) -> str:
    length = int(rng.integers(60, 141))
    energy = -int(rng.integers(300, 900))
    counts = []
    for _ in range(2):  # nucleotide counts of the two sequences (A, U, C; G is the rest)
        a, u, c = rng.multinomial(length, [0.2, 0.3, 0.25, 0.25])[:3]
        counts += [a, u, c]
    values = [energy, length] + [_g(n / length) for n in counts]
    return f"{label} " + " ".join(f"{i}:{v}" for i, v in enumerate(values, start=1))


def make_codrna(rng: np.random.Generator) -> dict[str, str]:
    train = list(CODRNA_QUOTED)
    train += [_codrna_row(rng, 1 if i % 3 == 0 else -1) for i in range(35)]
    test = [_codrna_row(rng, 1 if i % 3 == 1 else -1) for i in range(30)]
    return {"codrna/cod-rna": "\n".join(train) + "\n", "codrna/cod-rna.t": "\n".join(test) + "\n"}


def make_ijcnn(rng: np.random.Generator) -> dict[str, str]:
    lines = []
    for i in range(60):
        label = 1 if i % 10 == 3 else -1
        items = [f"{int(rng.integers(1, 11))}:1"]
        for index in range(11, 23):
            if rng.random() < 0.3:
                continue  # zero: omitted, as svmlight files do
            items.append(f"{index}:{_g(rng.uniform(-1, 1))}")
        lines.append(f"{label} " + " ".join(items))
    return {"ijcnn/ijcnn1": "\n".join(lines) + "\n"}


def _full_repr(value: float) -> str:
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def make_superconduct(rng: np.random.Generator) -> dict[str, str]:
    columns = superconduct_columns()
    rows = [",".join(columns)]
    temps = rng.permutation(
        np.concatenate([np.arange(1, 31) * 3.0, np.round(rng.uniform(0.5, 120, 20), 3)])
    )
    for temp in temps:
        n_elements = int(rng.integers(1, 10))
        stats = rng.lognormal(
            3.0, 1.2, 80
        )  # all 80 statistics of positive element properties are >= 0
        rows.append(
            ",".join([str(n_elements)] + [_full_repr(v) for v in stats] + [_full_repr(temp)])
        )
    unique = [",".join(ELEMENTS + ["critical_temp", "material"])]
    for temp, material, amounts in (
        (29.0, "Ba0.2La1.8Cu1O4", {"O": 4, "Cu": 1, "Ba": 0.2, "La": 1.8}),
        (26.0, "Ba0.1La1.9Ag0.1Cu0.9O4", {"O": 4, "Cu": 0.9, "Ag": 0.1, "Ba": 0.1, "La": 1.9}),
        (9.2, "Nb1", {"Nb": 1}),
    ):
        cells = [_full_repr(amounts.get(element, 0)) for element in ELEMENTS]
        unique.append(",".join(cells + [_full_repr(temp), material]))
    return {
        "superconduct/train.csv": "\n".join(rows) + "\n",
        "superconduct/unique_m.csv": "\n".join(unique) + "\n",
    }


def make_msd(rng: np.random.Generator) -> dict[str, str]:
    lines = [MSD_FIRST_ROW]
    years = list(MSD_YEARS) + list(rng.choice(MSD_YEARS, 63))
    for year in years:
        averages = rng.normal(0, 30, 12)
        averages[0] = rng.uniform(20, 55)  # timbre average 1 (loudness) is positive
        covariances = rng.normal(0, 150, 78)
        covariances[:11] = (
            np.abs(covariances[:11]) * 10
        )  # large positive values first, as in the real first row
        lines.append(
            ",".join(
                [str(int(year))] + [f"{v:.5f}" for v in np.concatenate([averages, covariances])]
            )
        )
    return {"msd/YearPredictionMSD.txt": "\n".join(lines) + "\n"}


def generate() -> dict[str, str]:
    """{relative path: text} of every format-faithful excerpt."""
    rng = np.random.default_rng(SEED)
    files = {}
    for make in (make_codrna, make_ijcnn, make_superconduct, make_msd):
        files.update(make(rng))
    return files


def main() -> None:
    for relative, text in generate().items():
        path = HERE / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("ascii"))
        print(f"wrote {path} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
