"""The seed documents' published figures (theirs, not ours), shown beside our ratios.

Sources: /work/shared/seeds/001_* (the paper: Table 2, Fig. 4 and Fig. 5 as stated in its
text) and 000_* (the course blog). Their setup: trees on 1 GiB pages, arrays on 4 KiB
pages, i7-7700, averages of ten runs. Numbers only; no text is taken from them.
"""
K, M, G = 1 << 10, 1 << 20, 1 << 30

PAPER = "seed paper (001), Table 2 — theirs: trees on 1 GiB pages vs arrays on 4 KiB pages"
TABLE2_SIZES = (4 * K, 4 * M, 4 * G, 8 * G, 16 * G, 32 * G, 64 * G)
TABLE2 = {
    ("linear", "naive"): (1.36, 2.97, 3.34, 3.37, 3.37, 3.37, 3.37),
    ("linear", "iterator"): (1.00, 1.02, 0.99, 0.99, 0.99, 0.99, 0.99),
    ("strided", "naive"): (1.71, 0.72, 1.28, 1.26, 1.08, 1.04, 1.06),
    ("strided", "iterator"): (2.47, 0.57, 1.02, 0.89, 0.86, 0.86, 0.86),
}

# Figures the paper and blog state in words (their Fig. 4 and 5 are plots without a table).
STATED = {
    "gups": "seed paper Fig. 4 (theirs): tree/array ratio falls with size; trees win (< 1.00x) "
            "only from 16 GB",
    "rbtree": "seed paper Fig. 4 (theirs): same red-black tree without translation costs: "
              "up to 50% less time (ratio down to ~0.50x)",
    "blackscholes": "seed paper Fig. 5 (theirs): trees cost < 3% (<= 1.03x), slightly faster "
                    "with iterators; blog (000, theirs): worst 1.17x at 8 KiB pages, 1.03x "
                    "with fixed depth at 16 KiB, 32 KiB best",
    "hashtable": "seed paper Fig. 5 (theirs): deepsjeng (one large hash table) < 3% overhead",
    "chase": "course blog (000, theirs): random pointer chase on large arrays is expensive; a "
             "one-page array costs about 1.5x the baseline's instructions with fixed depth",
}


def table2_row(access: str, flavour: str) -> dict:
    """{size_bytes: ratio} of one Table 2 row; flavour is naive or iterator."""
    return dict(zip(TABLE2_SIZES, TABLE2[(access, flavour)]))
