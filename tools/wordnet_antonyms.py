"""Write `pipeline/data/antonyms_wordnet.tsv` from Princeton WordNet 3.0's database files.

The polarity check (`pipeline.claims.polarity.antonyms`) reads opposite words from that file at run
time; this tool regenerates it from the WordNet data Debian packages (`apt-get install
wordnet-base`, files under /usr/share/wordnet). Nothing is fetched.

What is written, one pair per line (`word<TAB>opposite`, both single words, lower case):

* WordNet's antonym pointers (`!`) between words, in every part of speech ("increase" /
  "decrease", "safe" / "dangerous", "encourage" / "discourage");
* the words derivationally related (`+`, word to word) to one side of such a pair, against
  the other side ("encouragement" / "discourage").

Synonyms of a pair's synsets and adjective satellites (WordNet's indirect antonyms) were tried
and left out: they made 41,000 pairs, many of them senses no claim means ("check" / "start",
"down" / "safe"), which read paraphrases as reversals.

and, after a blank line and a `# inflections` line, WordNet's exception lists (`*.exc`) for the
words of the pairs (`rose<TAB>rise`, `stopped<TAB>stop`), which the rule-based lemmatiser of
`pipeline.claims.polarity.antonyms` cannot derive.

WordNet 3.0 license (Princeton University): permission to use, copy, modify and distribute
this software and database for any purpose is granted, provided the copyright notice appears
in all copies; the notice is the header of the written file.

Usage: python tools/wordnet_antonyms.py [--wordnet /usr/share/wordnet] [--out PATH]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
NOTICE = (
    "# Opposite words from Princeton WordNet 3.0 (tools/wordnet_antonyms.py).\n"
    "# WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Permission to\n"
    "# use, copy, modify and distribute this database for any purpose and without fee or\n"
    "# royalty is hereby granted, provided that the above copyright notice appears in all\n"
    "# copies. THIS DATABASE IS PROVIDED 'AS IS' AND PRINCETON UNIVERSITY MAKES NO\n"
    "# REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED.\n"
)

Synset = tuple[str, int]  # (pos, offset)


class WordNet:
    def __init__(self, root: Path) -> None:
        self.words: dict[Synset, list[str]] = {}
        # (synset, source word index or 0 for the whole synset) -> pointers
        self.pointers: dict[Synset, list[tuple[str, Synset, int, int]]] = defaultdict(list)
        for pos, name in POS_FILES.items():
            self._read(root / f"data.{name}", pos)
        self.exceptions: dict[str, set[str]] = defaultdict(set)
        for name in POS_FILES.values():
            for line in (root / f"{name}.exc").read_text(encoding="utf-8").splitlines():
                inflected, *lemmas = line.split()
                for lemma in lemmas:
                    self.exceptions[lemma].add(inflected)

    def _read(self, path: Path, pos: str) -> None:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(" "):
                continue
            fields = line.split(" | ")[0].split()
            offset, kind = int(fields[0]), fields[2]
            synset = (pos, offset)
            count = int(fields[3], 16)
            self.words[synset] = [fields[4 + 2 * i].split("(")[0].lower() for i in range(count)]
            at = 4 + 2 * count
            for _ in range(int(fields[at])):
                symbol, target, target_pos, source_target = fields[at + 1 : at + 5]
                target_pos = "a" if target_pos == "s" else target_pos
                source, goal = int(source_target[:2], 16), int(source_target[2:], 16)
                self.pointers[synset].append((symbol, (target_pos, int(target)), source, goal))
                at += 4
            del kind

    def single(self, synset: Synset) -> list[str]:
        return [w for w in self.words.get(synset, []) if w.isalpha()]


def pairs(wordnet: WordNet) -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()

    def add(left: str, right: str) -> None:
        if left != right and left.isalpha() and right.isalpha():
            found.add((left, right))
            found.add((right, left))

    for synset, pointers in wordnet.pointers.items():
        for symbol, target, source, goal in pointers:
            if symbol != "!":
                continue
            left = wordnet.words[synset][source - 1] if source else None
            right = wordnet.words.get(target, [""])[goal - 1] if goal else None
            if not (left and right):
                continue
            add(left, right)
            # The words derived from each side against the other ("reduction" / "increase").
            for word, own, other in ((left, synset, right), (right, target, left)):
                index = wordnet.words[own].index(word) + 1
                for symbol2, derived, source2, goal2 in wordnet.pointers.get(own, []):
                    if symbol2 == "+" and source2 == index and derived[0] in ("n", "v", "a"):
                        add(wordnet.words[derived][goal2 - 1], other)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "pipeline/data/antonyms_wordnet.tsv",
    )
    args = parser.parse_args()
    wordnet = WordNet(args.wordnet)
    found = pairs(wordnet)
    lemmas = {w for pair in found for w in pair}
    lines = [NOTICE] + [f"{a}\t{b}\n" for a, b in sorted(found) if a < b]
    lines.append("\n# inflections\n")
    for lemma in sorted(lemmas):
        for inflected in sorted(wordnet.exceptions.get(lemma, ())):
            if inflected.isalpha():
                lines.append(f"{inflected}\t{lemma}\n")
    args.out.write_text("".join(lines), encoding="utf-8")
    print(f"{args.out}: {len(found) // 2} pairs of {len(lemmas)} words")


if __name__ == "__main__":
    main()
