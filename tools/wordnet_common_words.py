"""Write `pipeline/data/common_words_wordnet.txt` from Princeton WordNet 3.0's database files.

The entity rule of the polarity check (`pipeline.claims.polarity.names`) takes capitalised
words for names. Posts shout: "BUT OF COURSE, Obama endorses…", "UPDATE: Crews have restored
…", "ILHAN OMAR SHARES HER EXTREMISTS VIEWS IN RARE 2013 VIDEO"; every shouted word became a
name the fact-check lacks, and right matches were demoted (issue 29). The rule reads this list
to tell a shouted ordinary word ("COURSE", "UPDATE", "VIEWS") from a shouted name ("OMAR",
"NSA").

What is written, one lower-case word a line: single words that WordNet writes in lower case
only (never capitalised in any synset, so "carter", "green", "hope", "black" and "bush", which
also name people or places, stay out) and that SemCor attests in at least one sense
(`cntlist.rev`), so rare senses do not turn names into words. Debian packages the data
(`apt-get install wordnet-base`, files under /usr/share/wordnet); nothing is fetched.

WordNet 3.0 license (Princeton University): permission to use, copy, modify and distribute
this software and database for any purpose is granted, provided the copyright notice appears
in all copies; the notice is the header of the written file.

Usage: python tools/wordnet_common_words.py [--wordnet /usr/share/wordnet] [--out PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

POS_NAMES = ("noun", "verb", "adj", "adv")
NOTICE = (
    "# Ordinary English words from Princeton WordNet 3.0 (tools/wordnet_common_words.py).\n"
    "# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Permission to\n"
    "# use, copy, modify and distribute this database for any purpose and without fee or\n"
    "# royalty is hereby granted, provided that the above copyright notice appears in all\n"
    "# copies. THIS DATABASE IS PROVIDED 'AS IS' AND PRINCETON UNIVERSITY MAKES NO\n"
    "# REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED.\n"
)


def written_forms(root: Path) -> tuple[set[str], set[str]]:
    """(words written in lower case somewhere, words written capitalised somewhere), single
    alphabetic words only, compared in lower case."""
    lower: set[str] = set()
    capitalised: set[str] = set()
    for name in POS_NAMES:
        for line in (root / f"data.{name}").read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):
                continue
            fields = line.split(" | ")[0].split()
            for i in range(int(fields[3], 16)):
                word = fields[4 + 2 * i].split("(")[0]
                if word.isalpha():
                    (lower if word.islower() else capitalised).add(word.lower())
    return lower, capitalised


def attested(root: Path) -> set[str]:
    """Lemmas with a sense SemCor counts (`cntlist.rev`: `lemma%sense-key number count`)."""
    found = set()
    for line in (root / "cntlist.rev").read_text(encoding="utf-8").splitlines():
        lemma = line.split()[0].split("%")[0]
        if lemma.isalpha():
            found.add(lemma.lower())
    return found


def common_words(root: Path) -> list[str]:
    lower, capitalised = written_forms(root)
    return sorted(w for w in (lower - capitalised) & attested(root) if len(w) >= 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "pipeline/data/common_words_wordnet.txt",
    )
    args = parser.parse_args()
    words = common_words(args.wordnet)
    args.out.write_text(NOTICE + "\n".join(words) + "\n", encoding="utf-8")
    print(f"{len(words)} words written to {args.out}")


if __name__ == "__main__":
    main()
