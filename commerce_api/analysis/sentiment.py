"""Review sentiment: VADER extended for commerce wording, scored per sentence, with aspects.

The lexicon, the booster words, the negation words and the normalisation are VADER's own
(the ``vaderSentiment`` package ships them; nothing is downloaded at run time). On top
(the words, phrases and aspect keywords are in ``sentiment_lexicon.py``):

- a commerce lexicon (``flimsy``, ``sturdy``, ``overpriced``...) and a few re-weighted words
  (``ok`` is lukewarm in a product review, not praise);
- a phrase pass that turns commerce phrases into single lexicon tokens before scoring
  ("fast shipping", "as described", "cheap plastic", "stopped working"...). As tokens they go
  through VADER's negation rule like any other word: "not as described" and "didn't stop
  working" flip, and the phrase's words are not counted a second time;
- VADER's word rules run per sentence (its "but" rule then weighs the clauses of one
  sentence, not the whole review), and the review's score is VADER's normalisation of the
  sum, so a review scores as VADER would score it apart from that;
- sarcasm: praise that only frames a complaint is turned around (VADER's negation scalar
  on every positive word of the review). A review is sarcastic when it carries a marker
  ("yeah right", "said no one ever", "oh great", "great, another..."), or, with no word of
  contrast ("but", "though"...) anywhere, when it names a concrete failure ("leaks",
  "chipped", "stopped working") and praises in the same sentence ("Love how the enamel
  chipped") or in a bare exclamation ("Just great.");
- aspects (shipping, quality, size_fit, value, packaging, service, description) are tagged
  per sentence from keyword lists; an aspect's score is the mean of the scores of the
  sentences that mention it.

The word loop is a port of ``SentimentIntensityAnalyzer.sentiment_valence`` that lowercases
each token once (the package re-lowercases the sentence for every word and translates
emoji character by character): the same rules at a fraction of the cost.
``tests/analysis/test_sentiment.py`` checks it against the package on plain sentences.
"""

import math
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from vaderSentiment import vaderSentiment as vader

from .sentiment_lexicon import (
    ASPECT_BIGRAMS,
    ASPECTS,
    BIGRAM_ENDS,
    COMMERCE_LEXICON,
    CONTRAST_WORDS,
    FAILURE_WORDS,
    PHRASE_INDEX,
    PHRASE_LEXICON,
    PHRASE_RULES,
    SARCASM_MARKERS,
    SARCASM_PRAISE,
    WORD_ASPECTS,
    WORD_RE,
)

SCORER_VERSION = "2"  # bump when the lexicon or rules change: stored scores are redone
POSITIVE_THRESHOLD = 0.05  # VADER's usual cut-offs on the compound score
NEGATIVE_THRESHOLD = -0.05

# Sentences end at . ! ? (runs of them) or a line break; "No. 5" splits too, harmlessly.
_SENTENCE_RE = re.compile(r"[^.!?\n]+[.!?]*")
_PUNCT = string.punctuation


# Scoring ----------------------------------------------------------------------------------


@dataclass
class Score:
    """A review's score in [-1, 1], its label, and ``{aspect: score}``."""

    score: float
    label: str
    aspects: dict = field(default_factory=dict)


def label_for(score: float) -> str:
    if score >= POSITIVE_THRESHOLD:
        return "positive"
    if score <= NEGATIVE_THRESHOLD:
        return "negative"
    return "neutral"


def rating_mismatch(rating: int | None, label: str) -> bool:
    """True when a 1-2 star rating comes with a positive text or a 4-5 star one with a
    negative text (3 stars and no rating never disagree)."""
    if rating is None:
        return False
    return (rating <= 2 and label == "positive") or (rating >= 4 and label == "negative")


class CommerceSentiment:
    """VADER with the commerce lexicon and phrase pass (one instance serves every thread)."""

    def __init__(self, extra_lexicon=True):
        base = vader.SentimentIntensityAnalyzer()
        self.lexicon = dict(base.lexicon)
        self.emojis = base.emojis
        self.phrases = bool(extra_lexicon)
        if extra_lexicon:
            self.lexicon.update(COMMERCE_LEXICON)
            self.lexicon.update(PHRASE_LEXICON)
        self._negate = frozenset(vader.NEGATE)
        self._boosters = vader.BOOSTER_DICT
        self._special = vader.SPECIAL_CASES

    # text preparation -------------------------------------------------------------------

    def _translate_emoji(self, text):
        if text.isascii():
            return text
        out, prev_space = [], True
        for char in text:
            description = self.emojis.get(char)
            if description is not None:
                if not prev_space:
                    out.append(" ")
                out.append(description)
                prev_space = False
            else:
                out.append(char)
                prev_space = char == " "
        return "".join(out)

    def prepare(self, text: str) -> str:
        """Emoji to words, typographic apostrophes to ASCII, phrases to tokens."""
        text = self._translate_emoji(text).replace("\u2019", "'").strip()
        if self.phrases:
            triggered = set()
            index = PHRASE_INDEX
            for word in WORD_RE.findall(text.lower()):
                rules = index.get(word[:4]) or index.get(word[:3])
                if rules:
                    triggered |= rules
            for i in sorted(triggered):
                regex, token = PHRASE_RULES[i]
                text = regex.sub(token, text)
        return text

    def _negated(self, word):
        return word in self._negate or "n't" in word

    def _scalar(self, word, lower, valence, is_cap_diff):
        scalar = self._boosters.get(lower, 0.0)
        if scalar:
            if valence < 0:
                scalar *= -1
            if word.isupper() and is_cap_diff:
                scalar = scalar + vader.C_INCR if valence > 0 else scalar - vader.C_INCR
        return scalar

    def _special_idioms(self, valence, low, i):
        n = len(low)
        onezero = f"{low[i - 1]} {low[i]}"
        twoonezero = f"{low[i - 2]} {low[i - 1]} {low[i]}"
        twoone = f"{low[i - 2]} {low[i - 1]}"
        threetwoone = f"{low[i - 3]} {low[i - 2]} {low[i - 1]}"
        threetwo = f"{low[i - 3]} {low[i - 2]}"
        for seq in (onezero, twoonezero, twoone, threetwoone, threetwo):
            if seq in self._special:
                valence = self._special[seq]
                break
        if n - 1 > i:
            zeroone = f"{low[i]} {low[i + 1]}"
            if zeroone in self._special:
                valence = self._special[zeroone]
        if n - 1 > i + 1:
            zeroonetwo = f"{low[i]} {low[i + 1]} {low[i + 2]}"
            if zeroonetwo in self._special:
                valence = self._special[zeroonetwo]
        for n_gram in (threetwoone, threetwo, twoone):
            if n_gram in self._boosters:
                valence = valence + self._boosters[n_gram]
        return valence

    def _negation(self, valence, low, clauses, start_i, i):
        # VADER's rule; extended: a negation word does not reach across a clause boundary
        # ("No complaints, great value": "no" does not negate "great value")
        n_scalar = vader.N_SCALAR
        j = i - (start_i + 1)
        same_clause = clauses[j] == clauses[i]
        if start_i == 0:
            if same_clause and self._negated(low[j]):
                valence *= n_scalar
        elif start_i == 1:
            if low[i - 2] == "never" and low[i - 1] in ("so", "this"):
                valence *= 1.25
            elif low[i - 2] == "without" and low[i - 1] == "doubt":
                pass
            elif same_clause and self._negated(low[j]):
                valence *= n_scalar
        else:
            if (low[i - 3] == "never" and low[i - 2] in ("so", "this")) or low[i - 1] in (
                "so",
                "this",
            ):
                valence *= 1.25
            elif low[i - 3] == "without" and (low[i - 2] == "doubt" or low[i - 1] == "doubt"):
                pass
            elif same_clause and self._negated(low[j]):
                valence *= n_scalar
        return valence

    def _valence(self, words, low, clauses, i, is_cap_diff):
        lexicon = self.lexicon
        item = low[i]
        valence = lexicon[item]
        n = len(low)
        if item == "no" and i != n - 1 and low[i + 1] in lexicon:
            valence = 0.0
        clause = clauses[i]
        if (
            (i > 0 and low[i - 1] == "no" and clauses[i - 1] == clause)
            or (i > 1 and low[i - 2] == "no" and clauses[i - 2] == clause)
            or (
                i > 2
                and low[i - 3] == "no"
                and low[i - 1] in ("or", "nor")
                and clauses[i - 3] == clause
            )
        ):
            valence = lexicon[item] * vader.N_SCALAR
        if words[i].isupper() and is_cap_diff:
            valence = valence + vader.C_INCR if valence > 0 else valence - vader.C_INCR
        for start_i in range(3):
            if i > start_i and low[i - (start_i + 1)] not in lexicon:
                s = self._scalar(
                    words[i - (start_i + 1)], low[i - (start_i + 1)], valence, is_cap_diff
                )
                if start_i == 1 and s != 0:
                    s *= 0.95
                if start_i == 2 and s != 0:
                    s *= 0.9
                valence += s
                valence = self._negation(valence, low, clauses, start_i, i)
                if start_i == 2:
                    valence = self._special_idioms(valence, low, i)
        # VADER's "least" rule
        if i > 1 and low[i - 1] not in lexicon and low[i - 1] == "least":
            if low[i - 2] not in ("at", "very"):
                valence *= vader.N_SCALAR
        elif i > 0 and low[i - 1] not in lexicon and low[i - 1] == "least":
            valence *= vader.N_SCALAR
        return valence

    def _sentence(self, sentence):
        """``(valences, lowercased tokens)`` of one prepared sentence; VADER's "but" rule
        applied within the sentence. (Tokens, clauses and VADER's all-caps test in one
        pass: this is the hot loop of a job scoring thousands of reviews.)"""
        words, low, clauses = [], [], []
        clause = upper = 0
        for token in sentence.split():
            stripped = token.strip(_PUNCT)
            word = token if len(stripped) <= 2 else stripped
            words.append(word)
            low.append(word.lower())
            clauses.append(clause)
            upper += word.isupper()
            if token[-1] in ",;:":
                clause += 1
        n = len(words)
        if not n:
            return [], []
        is_cap_diff = 0 < n - upper < n  # vader.allcap_differential
        lexicon, boosters = self.lexicon, self._boosters
        sentiments = [0] * n
        for i, item in enumerate(low):
            if item in lexicon and not (
                item in boosters or (item == "kind" and i < n - 1 and low[i + 1] == "of")
            ):
                sentiments[i] = self._valence(words, low, clauses, i, is_cap_diff)
        if "but" in low:
            # words before the first "but" weigh half, words after it one and a half
            bi = low.index("but")
            sentiments = [
                s * 0.5 if k < bi else (s * 1.5 if k > bi else s) for k, s in enumerate(sentiments)
            ]
        return sentiments, low

    @staticmethod
    def _compound(total, text):
        if not total:
            return 0.0
        amplifier = min(text.count("!"), 4) * 0.292
        questions = text.count("?")
        if questions > 1:
            amplifier += questions * 0.18 if questions <= 3 else 0.96
        total = total + amplifier if total > 0 else total - amplifier
        return vader.normalize(total)

    @staticmethod
    def _aspects_of(low):
        found = set()
        previous = ""
        for word in low:
            # tokens are stripped of punctuation already (but for those of one or two
            # letters, which are no aspect words)
            aspects = WORD_ASPECTS.get(word)
            if aspects:
                found |= aspects
            if word in BIGRAM_ENDS:
                bigram = ASPECT_BIGRAMS.get(f"{previous} {word}")
                if bigram:
                    found.add(bigram)
            previous = word
        return found

    def compound(self, text: str) -> float:
        """The compound score of ``text`` in [-1, 1] (sentences summed, as one text)."""
        prepared = self.prepare(text)
        total = sum(sum(self._sentence(s)[0]) for s in _SENTENCE_RE.findall(prepared))
        return round(self._compound(total, prepared), 4)

    def score(self, text: str, title: str | None = None) -> Score:
        """Score a review (title and text) per sentence; aspects from the sentences."""
        parts = [title.strip()] if title and title.strip() else []
        parts.append(text)
        original = "\n".join(parts)
        prepared = self.prepare(original)
        sentences = []
        for sentence in _SENTENCE_RE.findall(prepared):
            valences, low = self._sentence(sentence)
            if low:
                sentences.append((sentence, valences, low))
        if self.phrases and sarcastic(original.lower(), sentences):
            turn = vader.N_SCALAR
            sentences = [
                (sentence, [v * turn if v > 0 else v for v in valences], low)
                for sentence, valences, low in sentences
            ]
        total = 0.0
        aspect_scores = {}
        for sentence, valences, low in sentences:
            sentence_sum = sum(valences)
            total += sentence_sum
            mentioned = self._aspects_of(low)
            if mentioned:
                sentence_score = self._compound(sentence_sum, sentence)
                for aspect in mentioned:
                    aspect_scores.setdefault(aspect, []).append(sentence_score)
        value = round(self._compound(total, prepared), 4)
        aspects = {
            aspect: round(math.fsum(aspect_scores[aspect]) / len(aspect_scores[aspect]), 4)
            for aspect in ASPECTS
            if aspect in aspect_scores
        }
        return Score(value, label_for(value), aspects)


BARE_EXCLAMATION_WORDS = 3  # "Just great." "Brilliant design." "Great job."


def sarcastic(text: str, sentences: Sequence[tuple]) -> bool:
    """True when the review's praise is sarcasm (see the module docstring); ``text`` is the
    lower-cased review, ``sentences`` its ``(sentence, valences, tokens)``."""
    if SARCASM_MARKERS.search(text):
        return True
    failing, praising, bare = False, False, False
    for _, valences, low in sentences:
        if any(word in CONTRAST_WORDS for word in low):
            return False  # praise beside a complaint: an honest mixed review
        failure = any(w in FAILURE_WORDS and v < 0 for w, v in zip(low, valences, strict=True))
        praise = any(w in SARCASM_PRAISE and v > 0 for w, v in zip(low, valences, strict=True))
        failing |= failure
        praising |= praise and failure
        bare |= praise and len(low) <= BARE_EXCLAMATION_WORDS and min(valences) >= 0
    return failing and (praising or bare)


_default = None


def analyzer() -> CommerceSentiment:
    """The shared scorer (built once: loading VADER's lexicon takes ~50 ms)."""
    global _default
    if _default is None:
        _default = CommerceSentiment()
    return _default


def score_review(text: str, title: str | None = None) -> Score:
    return analyzer().score(text, title)


def average(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(math.fsum(values) / len(values), 4) if values else None
